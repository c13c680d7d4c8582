import { randomBytes } from 'node:crypto';
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

interface SeriesSummary {
  code: string;
  klineType: KlineType;
  closed: number;
  firstMs: number;
  lastMs: number;
  lastClose: number;
  forming: number | undefined;
}

/** `quoteflow demo`: offline, an in-process simulator, a K-line sync into ./quoteflow-demo/, a summary. */
export function registerDemoCommand(program: Command, ctx: CommandContext): void {
  program
    .command('demo')
    .summary('offline demo: sync a handful of products into ./quoteflow-demo/ and summarise')
    .description(
      'Starts an in-process simulator (market clock sped up so bars close while you watch), syncs a handful of ' +
        'products of every class for about 20 s into Parquet under ./quoteflow-demo/, then prints a summary table ' +
        'and a DuckDB query to paste. Needs no network and no token.',
    )
    .option('--out <dir>', 'dataset directory', 'quoteflow-demo')
    .option('--duration <seconds>', 'how long to sync', intAtLeast(1), 20)
    .option(
      '--clock-speed <x>',
      'market clock speed-up (30: a 1-minute bar closes every 2 s)',
      intAtLeast(1),
      30,
    )
    .option('--bars <n>', 'closed bars of history per series', intAtLeast(1), 60)
    .action(async (flags: DemoFlags) => {
      await checkOutDir(flags.out, ctx.io.cwd, '--out', ['kline']);
      const [{ acceleratedClock, classifyCode }, { startSimulator }, { runKlineSync }] = await Promise.all([
        import('@quoteflow/core'),
        import('@quoteflow/simulator'),
        import('../internal/run-kline-sync.js'),
      ]);
      const token = `demo-${randomBytes(12).toString('hex')}`;
      ctx.redactor.add(token);
      // One clock for the simulator and the pipeline: market time runs fast for both, so bars close
      // while you watch and nothing compares two different times.
      const clock = acceleratedClock({ speed: flags.clockSpeed });
      const sim = await startSimulator({ port: 0, tokens: { [token]: 'professional' }, clock, seed: 42 });
      ctx.logger.info(
        { url: sim.url, clockSpeed: flags.clockSpeed, durationS: flags.duration },
        'demo simulator started',
      );
      const series = new Map<string, SeriesSummary>();
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
          onUpdate: (u: BarUpdate) => {
            const key = `${u.code}:${u.klineType}`;
            let s = series.get(key);
            if (s === undefined) {
              s = {
                code: u.code,
                klineType: u.klineType,
                closed: 0,
                firstMs: Infinity,
                lastMs: -Infinity,
                lastClose: NaN,
                forming: undefined,
              };
              series.set(key, s);
            }
            if (u.final) {
              s.closed++;
              s.firstMs = Math.min(s.firstMs, u.tsMs);
              if (u.tsMs >= s.lastMs) {
                s.lastMs = u.tsMs;
                s.lastClose = u.close;
              }
            } else {
              s.forming = u.close;
            }
          },
        });
        const refused = sim.log.refused().length;
        const dir = resolve(ctx.io.cwd, flags.out);
        const rows = [...series.values()].sort(
          (a, b) => a.code.localeCompare(b.code) || a.klineType - b.klineType,
        );
        const iso = (ms: number): string =>
          Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : '-';
        ctx.out(
          `quoteflow demo: ${summary.closedBars} closed bars of ${summary.series} series in ${summary.files.length} Parquet files under ${dir}/kline/ ` +
            `(${sim.log.length} requests, ${refused} refused, ${summary.liveCycles} live cycles)\n\n`,
        );
        ctx.out(
          renderTable(rows, [
            { header: 'code', value: (r) => r.code },
            { header: 'class', value: (r) => classifyCode(r.code) },
            { header: 'kline', value: (r) => String(r.klineType), align: 'right' },
            { header: 'closed bars', value: (r) => String(r.closed), align: 'right' },
            { header: 'first bar (UTC)', value: (r) => iso(r.firstMs) },
            { header: 'last bar (UTC)', value: (r) => iso(r.lastMs) },
            {
              header: 'last close',
              value: (r) => (Number.isNaN(r.lastClose) ? '-' : String(r.lastClose)),
              align: 'right',
            },
            {
              header: 'forming',
              value: (r) => (r.forming === undefined ? '-' : String(r.forming)),
              align: 'right',
            },
          ]),
        );
        ctx.out(
          '\nQuery it with DuckDB (paste into a shell):\n\n' +
            `  duckdb -c "SELECT code, kline_type, count(*) AS bars, min(ts) AS first, max(ts) AS last, round(arg_max(close, ts), 4) AS last_close ` +
            `FROM read_parquet('${dir}/kline/kline_type=*/**/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY ALL"\n`,
        );
      } finally {
        await sim.close();
      }
    });
}
