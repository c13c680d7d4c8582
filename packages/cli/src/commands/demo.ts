import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { BarUpdate, KlineType } from '@quoteflow/core';
import type { CommandContext } from '../command-context.js';
import { intAtLeast } from '../internal/parse-args.js';
import { renderTable } from '../internal/render-table.js';
import { checkOutDir } from '../internal/check-out-dir.js';

/** A handful of products of every class the service serves (provider-facts.md example codes). */
export const DEMO_CODES = [
  'AAPL.US',
  '700.HK',
  '600416.SH',
  'BTCUSDT',
  'ETHUSDT',
  'EURGBP',
  'GOLD',
  'USOIL',
  'US30',
] as const;
const DEMO_KLINE_TYPES: KlineType[] = [1, 5];

interface DemoFlags {
  out: string;
  duration: number;
  clockSpeed: number;
  bars: number;
}

/** What this run saw of one series: its new closed bars, the newest one's close, the forming bar. */
interface SeriesSeen {
  closed: number;
  lastMs: number;
  lastClose: number;
  forming: number | undefined;
}

/** One row of the summary: what the dataset holds of a series, and what this run added. */
interface SummaryRow {
  readonly code: string;
  readonly klineType: KlineType;
  readonly held: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly seen: SeriesSeen | undefined;
}

/** `quoteflow demo`: offline, an in-process simulator, a K-line sync into ./quoteflow-demo/, a summary. */
export function registerDemoCommand(program: Command, ctx: CommandContext): void {
  program
    .command('demo')
    .summary('offline demo: sync a handful of products into ./quoteflow-demo/ and summarise')
    .description(
      'Starts an in-process simulator (market clock sped up so bars close while you watch, catching up with the ' +
        'real time as the run ends, so no bar is dated in the future), syncs a handful of products of every class ' +
        'for about 20 s into Parquet under ./quoteflow-demo/, then prints what the dataset holds and what this run ' +
        'added, and a DuckDB query to paste. Needs no network and no token.',
    )
    .option('--out <dir>', 'dataset directory', 'quoteflow-demo')
    .option('--duration <seconds>', 'how long to sync', intAtLeast(1), 20)
    .option(
      '--clock-speed <x>',
      'market clock speed-up (30: a 1-minute bar closes every 2 s) until it meets the real time',
      intAtLeast(1),
      30,
    )
    .option('--bars <n>', 'closed bars of history per series', intAtLeast(1), 60)
    .action(async (flags: DemoFlags) => {
      await checkOutDir(flags.out, ctx.io.cwd, '--out', ['kline']);
      const [{ startSimulator }, { runKlineSync }, { catchUpClock }] = await Promise.all([
        import('@quoteflow/simulator'),
        import('../internal/run-kline-sync.js'),
        import('../internal/catch-up-clock.js'),
      ]);
      const token = `demo-${randomBytes(12).toString('hex')}`;
      ctx.redactor.add(token);
      // One clock for the simulator and the pipeline: market time runs fast for both, so bars close
      // while you watch and nothing compares two different times. It starts as far back as the run
      // covers at its speed and meets the real time as the run ends: the market window ends at the
      // real now, so no bar is dated in the future and a run right after has the minutes since.
      const clock = catchUpClock({
        speed: flags.clockSpeed,
        behindMs: flags.duration * 1000 * flags.clockSpeed,
      });
      const sim = await startSimulator({ port: 0, tokens: { [token]: 'professional' }, clock, seed: 42 });
      ctx.logger.info(
        { url: sim.url, clockSpeed: flags.clockSpeed, durationS: flags.duration },
        'demo simulator started',
      );
      const seen = new Map<string, SeriesSeen>();
      try {
        const summary = await runKlineSync(ctx, {
          service: { baseUrl: sim.url, token, plan: 'professional', limits: {} },
          codes: DEMO_CODES,
          klineTypes: DEMO_KLINE_TYPES,
          bars: flags.bars,
          out: flags.out,
          format: 'parquet',
          live: true,
          durationS: flags.duration,
          checkpointMs: 5_000 * flags.clockSpeed,
          clock,
          onUpdate: (u: BarUpdate) => noteUpdate(seen, u),
        });
        const dir = resolve(ctx.io.cwd, flags.out);
        const requests = `${sim.log.length} requests, ${sim.log.refused().length} refused, ${summary.liveCycles} live cycles`;
        ctx.out(await renderDemoSummary(dir, seen, summary.closedBars, requests));
      } finally {
        await sim.close();
      }
    });
}

/** Counts a bar update of this run: a closed bar (the newest one's close), or the forming one. */
function noteUpdate(seen: Map<string, SeriesSeen>, u: BarUpdate): void {
  const key = `${u.code}:${u.klineType}`;
  let s = seen.get(key);
  if (s === undefined)
    seen.set(key, (s = { closed: 0, lastMs: -Infinity, lastClose: NaN, forming: undefined }));
  if (!u.final) {
    s.forming = u.close;
    return;
  }
  s.closed++;
  if (u.tsMs >= s.lastMs) {
    s.lastMs = u.tsMs;
    s.lastClose = u.close;
  }
}

/**
 * The demo's summary: per series what the dataset holds (bars, first and last, read from its files)
 * and what this run added, so a run right after another one shows the dataset too, not dashes; then
 * the DuckDB query.
 */
async function renderDemoSummary(
  dir: string,
  seen: ReadonlyMap<string, SeriesSeen>,
  closedBars: number,
  requests: string,
): Promise<string> {
  const [{ classifyCode }, { inspectDataset }] = await Promise.all([
    import('@quoteflow/core/internal'),
    import('@quoteflow/pipelines'),
  ]);
  // A run stopped before its first commit has no dataset yet.
  const { kline } = existsSync(dir)
    ? await inspectDataset(dir)
    : { kline: { files: 0, series: [] as const } };
  const rows: SummaryRow[] = kline.series
    .filter(
      (s) => (DEMO_CODES as readonly string[]).includes(s.code) && DEMO_KLINE_TYPES.includes(s.klineType),
    )
    .map((s) => ({ ...s, held: s.rows, seen: seen.get(`${s.code}:${s.klineType}`) }));
  const held = rows.reduce((n, r) => n + r.held, 0);
  const iso = (ms: number): string =>
    Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : '-';
  const num = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '-' : String(v));
  const table = renderTable(rows, [
    { header: 'code', value: (r) => r.code },
    { header: 'class', value: (r) => classifyCode(r.code) },
    { header: 'kline', value: (r) => String(r.klineType), align: 'right' },
    { header: 'closed bars', value: (r) => String(r.held), align: 'right' },
    { header: 'new', value: (r) => String(r.seen?.closed ?? 0), align: 'right' },
    { header: 'first bar (UTC)', value: (r) => iso(r.firstMs) },
    { header: 'last bar (UTC)', value: (r) => iso(r.lastMs) },
    {
      header: 'last close',
      value: (r) => num(r.seen?.lastMs === r.lastMs ? r.seen.lastClose : undefined),
      align: 'right',
    },
    { header: 'forming', value: (r) => num(r.seen?.forming), align: 'right' },
  ]);
  return (
    `quoteflow demo: ${held} closed bars of ${rows.length} series in ${kline.files} Parquet files under ${dir}/kline/, ` +
    `${closedBars} of them new (${requests})\n\n${table}` +
    '\nQuery it with DuckDB (paste into a shell):\n\n' +
    `  duckdb -c "SELECT code, kline_type, count(*) AS bars, min(ts) AS first, max(ts) AS last, round(arg_max(close, ts), 4) AS last_close ` +
    `FROM read_parquet('${dir}/kline/kline_type=*/**/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY ALL"\n`
  );
}
