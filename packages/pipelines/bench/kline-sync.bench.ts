// K-line sync on the simulator (plan professional), against the plan's own figures measured in the
// same run: (1) backfill utilisation = achieved /kline rate / the plan's binding rate (target >= 0.95);
// (2) freshness = time from a bar closing on the simulator to its row being handed to the sink,
// p50/p99 against the refresh period `estimatePlan` predicts + 250 ms; (3) RSS of a 10,000-series
// sync sampled over the run (steady under 300 MB). BENCH_SYNC_SECONDS (default 60; the issue's
// figure is 1800) sets the length of (3).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuoteflowClient, planLimits, sustainedRate, type KlineType } from '@quoteflow/core';
import { estimatePlan, klineSync } from '@quoteflow/pipelines';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startSimulator, syntheticCatalogue } from '@quoteflow/simulator';

const TOKEN = 'bench-kline-sync';
const syncSeconds = Number(process.env['BENCH_SYNC_SECONDS'] ?? 60);
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

/** The simulator in a child process (so RSS below is the sync's own); its URL and a stop function. */
async function simProcess(
  count: number,
  clockSpeed: number,
): Promise<{ url: string; stop: () => Promise<string> }> {
  const script = fileURLToPath(new URL('./sim-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(count), String(clockSpeed)], {
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

async function freshnessAndRss(nSeries: number, seconds: number, clockSpeed: number): Promise<string> {
  const server = await simProcess(nSeries, clockSpeed);
  // The child's market clock starts at its real start time and runs at clockSpeed (its default).
  const startedMs = Date.now();
  const sim = { url: server.url, marketNow: (): number => startedMs + (Date.now() - startedMs) * clockSpeed };
  const dir = await mkdtemp(join(tmpdir(), 'qf-bench-sync-'));
  const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional' });
  const codes = syntheticCatalogue({ count: nSeries, classes: ['crypto'] }).map((p) => p.code);
  const klineTypes: KlineType[] = [1];
  const predicted = estimatePlan('professional', { codes, klineTypes, bars: 0 }).live.refreshPeriodMs;
  const lags: number[] = [];
  const rss: number[] = [];
  let liveSinceMs = Infinity;
  const sync = klineSync({
    client,
    codes,
    klineTypes,
    bars: 0, // live only: 10,000 /kline requests would take 500 s of the plan
    files: { dir },
    checkpointMs: 10_000,
    onEvent: (e) => {
      if (e.type === 'live-cycle' && liveSinceMs === Infinity) liveSinceMs = Date.now();
    },
    onUpdate: (u) => {
      if (!u.final) return;
      // Real time at which the bar closed on the simulator's (sped-up) market clock.
      const closedAtReal = Date.now() - (sim.marketNow() - (u.tsMs + 60_000)) / clockSpeed;
      // Only bars that closed while live polling was running (not the ones found at start).
      if (closedAtReal >= liveSinceMs) lags.push(Date.now() - closedAtReal);
    },
  });
  const sampler = setInterval(() => rss.push(process.memoryUsage().rss / 2 ** 20), 5_000);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearInterval(sampler);
  const summary = await sync.stop();
  await client.close();
  const refused = await server.stop();
  await rm(dir, { recursive: true, force: true });
  const steady = rss.slice(Math.floor(rss.length / 3));
  return [
    `| sync ${nSeries.toLocaleString('en-US')} series, ${seconds} s, clock ×${clockSpeed} | ${summary.closedBars} closed bars, ${summary.liveCycles} cycles | freshness p50 ${pct(lags, 50).toFixed(0)} ms, p99 ${pct(lags, 99).toFixed(0)} ms vs predicted refresh ${predicted} ms + 250 ms | RSS steady max ${Math.max(...steady).toFixed(0)} MB (min ${Math.min(...steady).toFixed(0)}) | ${refused} refused |`,
  ].join('\n');
}

console.log('| run | volume | figure | result | refusals |\n|---|---|---|---|---|');
// The sync runs first: RSS is then the sync's own, before anything else ran in this process.
console.log(await freshnessAndRss(10_000, syncSeconds, 1));
console.log(await freshnessAndRss(500, Math.min(syncSeconds, 60), 1));
console.log(await backfillUtilisation());
