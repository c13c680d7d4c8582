// Close-aware polling against poll-everything, in one run: a universe of 4,000 US + 3,000 HK +
// 3,000 A-share codes with 1-minute and daily bars (20,000 series), live only, plan professional
// (one /batch-kline of up to 500 groups a second), at 16:00 UTC on a Tuesday, when only New York
// trades. One clock at real speed shared by the in-process simulator and the sync. Figures: the lag
// from a US 1-minute bar's close to its final row reaching the sink (p50/p99, bars that closed
// after the first live poll), against the target (US 1-minute series / 500) × 1 s + 1 s; and the
// groups asked for on closed markets (HK, A-shares) as a share of all groups asked for.
// BENCH_POLL_SECONDS (default 150) sets each mode's length. Run: `pnpm bench close-aware`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceleratedClock, QuoteflowClient, type BatchKlineGroup } from '@quoteflow/core';
import { klineSync } from '@quoteflow/pipelines';
import { startSimulator, syntheticCatalogue } from '@quoteflow/simulator';

const seconds = Number(process.env['BENCH_POLL_SECONDS'] ?? 150);
const TOKEN = 'bench-close-aware';
const START = Date.parse('2026-11-24T16:00:00Z');
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

const classes = [
  ...Array(4).fill('us-stock'),
  ...Array(3).fill('hk-stock'),
  ...Array(3).fill('cn-stock'),
] as ('us-stock' | 'hk-stock' | 'cn-stock')[];
const products = syntheticCatalogue({ count: 10_000, classes });
const codes = products.map((p) => p.code);
const usOneMinute = codes.filter((c) => c.endsWith('.US')).length;

async function run(closeAware: boolean): Promise<string> {
  // Each mode starts at 16:00 UTC on its own clock, so both see the same market hour.
  const clock = acceleratedClock({ speed: 1, startMs: START });
  const sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional' },
    seed: 3,
    clock,
    products,
    historyDays: 3,
  });
  const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
  const dir = await mkdtemp(join(tmpdir(), 'qf-bench-close-aware-'));
  const groups = { open: 0, closed: 0 };
  const batchKline = client.batchKline.bind(client);
  client.batchKline = ((asked: readonly BatchKlineGroup[], options) => {
    for (const g of asked) groups[g.code.endsWith('.US') ? 'open' : 'closed']++;
    return batchKline(asked, options);
  }) as typeof client.batchKline;
  const lags: number[] = [];
  let liveSinceMs = Infinity;
  const sync = klineSync({
    client,
    codes,
    klineTypes: [1, 8],
    bars: 0,
    files: { dir, upkeep: false },
    closeAwarePolling: closeAware,
    onEvent: (e) => {
      if (e.type === 'live-cycle' && liveSinceMs === Infinity) liveSinceMs = clock.now();
    },
    onUpdate: (u) => {
      if (!u.final || u.klineType !== 1 || !u.code.endsWith('.US')) return;
      const closedAtMs = u.tsMs + 60_000;
      if (closedAtMs >= liveSinceMs) lags.push(clock.now() - closedAtMs);
    },
  });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const summary = await sync.stop();
  await client.close();
  const refused = sim.log.refused().length;
  await sim.close();
  await rm(dir, { recursive: true, force: true });
  const all = groups.open + groups.closed;
  const target = (usOneMinute / 500) * 1000 + 1000;
  const p99 = pct(lags, 99);
  return `| ${closeAware ? '**close-aware**' : 'poll everything (before)'} | ${summary.liveCycles} | ${lags.length} | ${(pct(lags, 50) / 1000).toFixed(1)} / **${(p99 / 1000).toFixed(1)}** s | ${(target / 1000).toFixed(0)} s: ${p99 <= target ? 'met' : 'not met'} | ${all.toLocaleString('en')} | ${((100 * groups.closed) / Math.max(1, all)).toFixed(1)} % | ${refused} |`;
}

console.log(
  `${codes.length.toLocaleString('en')} codes (${usOneMinute} US, 3,000 HK, 3,000 A-share) × 1-minute and daily bars, plan professional, ${seconds} s per mode at 16:00 UTC (only New York open)\n`,
);
console.log(
  '| polling | live cycles | US 1-min bars closed | close → sink p50 / p99 | target | groups asked | on closed markets | refused |',
);
console.log('| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |');
console.log(await run(false));
console.log(await run(true));
