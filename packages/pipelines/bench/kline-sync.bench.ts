// K-line sync on the simulator (plan professional), against the plan's own figures measured in the
// same run: (1) backfill utilisation = achieved /kline rate / the plan's binding rate (target >= 0.95);
// (2) freshness = time from a bar closing on the simulator to its row being handed to the sink,
// p50/p99 against the refresh period `estimatePlan` predicts + 250 ms; (3) RSS of a 10,000-series
// sync sampled over the run (steady under 300 MB). BENCH_SYNC_SECONDS (default 60; the issue's
// figure is 1800) sets the length of (3). BENCH_SYNC_ONLY=1 runs the 10,000-series sync alone.
//
// The bench runs under `--max-semi-space-size=8` (MiB), as the `quoteflow` CLI does: a sync decodes
// a /batch-kline answer every second, all short-lived objects, and V8 otherwise grows its young
// generation to ~100 MiB over the first minute and keeps it (measured: heapTotal ~200 MB against
// ~75 MB with 8 MiB semi-spaces, for the same ~60 MB live heap). BENCH_SEMI_SPACE_MB=0 keeps V8's default.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuoteflowClient, planLimits, type KlineType } from '@quoteflow/core';
import { sustainedRate } from '@quoteflow/core/internal';
import { estimatePlan, klineSync } from '@quoteflow/pipelines';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startSimulator, syntheticCatalogue } from '@quoteflow/simulator';

const semiSpaceMb = process.env['BENCH_SEMI_SPACE_MB'] ?? '8';
if (semiSpaceMb !== '0' && !process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
  const self = spawn(
    process.execPath,
    [...process.execArgv, `--max-semi-space-size=${semiSpaceMb}`, fileURLToPath(import.meta.url)],
    { stdio: 'inherit' },
  );
  process.on('SIGTERM', () => self.kill('SIGTERM'));
  process.exit(await new Promise<number>((res) => self.on('exit', (code) => res(code ?? 1))));
}

const TOKEN = 'bench-kline-sync';
const syncSeconds = Number(process.env['BENCH_SYNC_SECONDS'] ?? 60);
/** RSS sampling period; BENCH_MEM_LOG=1 also prints every sample's breakdown to stderr. */
const SAMPLE_MS = 10_000;
const memLog = process.env['BENCH_MEM_LOG'] === '1';
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function backfillUtilisation(): Promise<string> {
  const sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 2 });
  const dir = await mkdtemp(join(tmpdir(), 'qf-bench-bf-'));
  const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional' });
  // 40 crypto and forex series of 6,000 bars (13 pages each): one series' pages are sequential, so
  // the series in flight (32 by default) keep the scheduler's queue full.
  const codes = sim.market
    .products()
    .filter((p) => p.productClass === 'crypto' || p.productClass === 'forex')
    .map((p) => p.code)
    .slice(0, 40);
  try {
    const t0 = Date.now();
    await klineSync({ client, codes, klineTypes: [1], bars: 6_000, files: { dir }, live: false }).done;
    const klines = sim.log.filter({ endpoint: 'kline', sinceMs: t0 });
    const spanS = (klines.at(-1)!.arrivalMs - klines[0]!.arrivalMs) / 1000;
    const achieved = (klines.length - 1) / spanS;
    const binding = sustainedRate(planLimits('professional'), 'kline');
    return `| backfill ${codes.length} series × 6,000 bars | ${klines.length} /kline requests in ${spanS.toFixed(1)} s | ${achieved.toFixed(2)} req/s vs plan ${binding} req/s | utilisation **${(achieved / binding).toFixed(3)}** | refused ${sim.log.refused().length} |`;
  } finally {
    await client.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The simulator in a child process (so RSS below is the sync's own); its URL and a stop function.
 * It runs on the real clock, like the client here: two processes cannot share one clock object.
 */
async function simProcess(count: number): Promise<{ url: string; stop: () => Promise<string> }> {
  const script = fileURLToPath(new URL('./sim-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(count)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) res(out.split('\n')[0]!.trim());
    });
    child.on('exit', (code) => rej(new Error(`sim-server exited ${code}: ${err}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((res) => {
        child.on('exit', () => res(/refused (\d+)/.exec(err)?.[1] ?? '?'));
        child.kill('SIGTERM');
      }),
  };
}

async function freshnessAndRss(nSeries: number, seconds: number): Promise<string> {
  const server = await simProcess(nSeries);
  const startedMs = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'qf-bench-sync-'));
  const client = new QuoteflowClient({ baseUrl: server.url, token: TOKEN, plan: 'professional' });
  const codes = syntheticCatalogue({ count: nSeries, classes: ['crypto'] }).map((p) => p.code);
  const klineTypes: KlineType[] = [1];
  // What `quoteflow plan` prints as the refresh period for this universe.
  const predicted = estimatePlan('professional', { codes, klineTypes, bars: 0 }).live.refreshPeriodMs;
  const lags: number[] = [];
  const cycleMs: number[] = [];
  const rss: { tS: number; mb: number }[] = [];
  let liveSinceMs = Infinity;
  const sync = klineSync({
    client,
    codes,
    klineTypes,
    bars: 0, // live only: 10,000 /kline requests would take 500 s of the plan
    files: { dir },
    checkpointMs: 10_000,
    onEvent: (e) => {
      if (e.type !== 'live-cycle') return;
      if (liveSinceMs === Infinity) liveSinceMs = Date.now();
      else cycleMs.push(e.durationMs);
    },
    onUpdate: (u) => {
      if (!u.final) return;
      // When the bar closed: market time is real time here (the simulator's clock is the real one).
      const closedAtReal = u.tsMs + 60_000;
      // Only bars that closed while live polling was running (not the ones found at start).
      if (closedAtReal >= liveSinceMs) lags.push(Date.now() - closedAtReal);
    },
  });
  const mb = (x: number): number => x / 2 ** 20;
  let last = process.memoryUsage();
  const sampler = setInterval(() => {
    last = process.memoryUsage();
    const tS = (Date.now() - startedMs) / 1000;
    rss.push({ tS, mb: mb(last.rss) });
    if (memLog) {
      console.error(
        `t=${tS.toFixed(0)}s rss=${mb(last.rss).toFixed(0)} heapUsed=${mb(last.heapUsed).toFixed(0)} heapTotal=${mb(last.heapTotal).toFixed(0)} external=${mb(last.external).toFixed(0)} arrayBuffers=${mb(last.arrayBuffers).toFixed(0)} closedLags=${lags.length}`,
      );
    }
  }, SAMPLE_MS);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearInterval(sampler);
  const summary = await sync.stop();
  await client.close();
  const refused = await server.stop();
  await rm(dir, { recursive: true, force: true });
  // Warm-up: the first third of the run, at most 5 minutes (start-up, first files, heap growth).
  const warmUpS = Math.min(300, seconds / 3);
  const steady = rss.filter((x) => x.tS >= warmUpS).map((x) => x.mb);
  const f = (x: number): string => x.toFixed(0);
  const p99 = pct(lags, 99);
  return `| ${nSeries.toLocaleString('en-US')} series, ${seconds} s | ${summary.closedBars} closed bars, ${summary.liveCycles} cycles (mean ${f(mean(cycleMs))} ms) | ${f(Math.min(...steady))} / ${f(pct(steady, 50))} / **${f(Math.max(...steady))}** MB (${steady.length} samples after ${f(warmUpS)} s) | ${f(mb(last.heapUsed))} / ${f(mb(last.heapTotal))} / ${f(mb(last.external))} / ${f(mb(last.arrayBuffers))} MB | ${f(pct(lags, 50))} / **${f(p99)}** ms | ${predicted} + 250 ms: ${p99 <= predicted + 250 ? 'met' : 'not met'} | ${refused} |`;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

console.log(`node ${process.version} ${process.execArgv.join(' ')}\n`);
console.log(
  '| sync (plan professional, 1-minute bars, clock ×1) | volume | RSS steady min / median / max | last sample heapUsed / heapTotal / external / arrayBuffers | freshness p50 / p99 | vs `quoteflow plan` refresh | refused |\n|---|---|---|---|---|---|---|',
);
// The sync runs first: RSS is then the sync's own, before anything else ran in this process.
console.log(await freshnessAndRss(10_000, syncSeconds));
if (process.env['BENCH_SYNC_ONLY'] !== '1') {
  console.log(await freshnessAndRss(500, Math.min(syncSeconds, 60)));
  console.log('\n| run | volume | figure | result | refusals |\n|---|---|---|---|---|');
  console.log(await backfillUtilisation());
}
