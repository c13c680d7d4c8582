/**
 * Plan scheduler benchmarks, each against a baseline measured in the same run:
 *
 * 1. Overhead per job, one job at a time: calling the function directly (baseline), raw
 *    bottleneck `schedule()` with no limits, and `PlanScheduler.schedule()` with limits that never
 *    bind. Also a burst of 1,000 jobs submitted at once.
 * 2. Memory per queued job: 10,000 jobs waiting in a PlanScheduler (basic plan) vs 10,000 jobs
 *    waiting in a raw bottleneck limiter (`minTime: 1000`).
 * 3. Utilisation of a real-clock kline backfill of ~15 s on premium and professional (run side by
 *    side, each with its own scheduler): achieved rate / allowed rate of the binding rule, and the
 *    largest number of starts seen in any window of each rule (must not exceed the limit).
 * 4. Shares between sources of one pipeline file (real clock, ~15 s, premium): a live depth poller
 *    that always has a request waiting, a live `/batch-kline` poll every second, and six kline
 *    backfill series paging one request at a time. Per source: starts and share; overall: the
 *    combined rule's utilisation and the largest window counts (must not exceed the limits).
 *
 * Run: `pnpm bench scheduler` (builds first; this file imports the built package).
 */
import Bottleneck from 'bottleneck';
import { PlanScheduler, planLimits, type PlanLimits, type WindowSpec } from '@quoteflow/core';
import { MemoryWindowStore, sustainedRate } from '@quoteflow/core/internal';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const job = async () => 1;

// --- 1. overhead per job ---------------------------------------------------------------------
const unbounded: PlanLimits = {
  ...planLimits('professional'),
  rules: planLimits('professional').rules.map((r) => ({ ...r, limit: 1e12 })),
  perDay: 1e15,
};
const scheduler = new PlanScheduler(unbounded, { maxInFlight: Number.POSITIVE_INFINITY });
const limiter = new Bottleneck({ maxConcurrent: null });
const request = { endpoint: 'kline', priority: 'backfill', sourceId: 'bench' } as const;

const sequential = await measure(
  [
    ['direct call (baseline)', () => job()],
    ['raw bottleneck schedule(), no limits', () => limiter.schedule(job)],
    ['PlanScheduler.schedule(), limits never bind', () => scheduler.schedule(request, job)],
  ],
  5,
  200,
);
const burst = await measure(
  [
    ['direct call (baseline)', () => Promise.all(Array.from({ length: 1_000 }, job))],
    [
      'raw bottleneck schedule(), no limits',
      () => Promise.all(Array.from({ length: 1_000 }, () => limiter.schedule(job))),
    ],
    [
      'PlanScheduler.schedule(), limits never bind',
      () => Promise.all(Array.from({ length: 1_000 }, () => scheduler.schedule(request, job))),
    ],
  ],
  3,
  1,
);
await scheduler.close();
await limiter.stop({ dropWaitingJobs: false });

console.log(`node ${process.version}; median of interleaved rounds\n`);
console.log('### Overhead per job\n');
console.log('| case | one at a time, per job (µs) | vs direct | burst of 1,000, per job (µs) | vs direct |');
console.log('|---|---:|---:|---:|---:|');
for (let i = 0; i < sequential.length; i++) {
  const s = sequential[i]!;
  const b = burst[i]!;
  console.log(
    `| ${s.name} | ${s.us.toFixed(1)} | ${(s.us / sequential[0]!.us).toFixed(0)}x | ${(b.us / 1_000).toFixed(1)} | ${(b.us / burst[0]!.us).toFixed(0)}x |`,
  );
}

// The gate alone (no bottleneck): one exact check-and-record over the specs of a kline start.
{
  const store = new MemoryWindowStore();
  const specs: WindowSpec[] = planLimits('professional')
    .rules.filter((r) => r.scope === 'all' || r.scope === 'kline')
    .map((r) => ({ kind: 'sliding', key: r.id, windowMs: r.windowMs + 25, limit: 1e12 }));
  specs.push({ kind: 'bucket', key: 'day', limit: 1e15, endsAtMs: Number.MAX_SAFE_INTEGER });
  const n = 200_000;
  let t = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) store.tryAcquire(specs, (t += 0.01));
  const us = Number(process.hrtime.bigint() - started) / 1e3 / n;
  console.log(
    `\nThe exact gate alone (MemoryWindowStore.tryAcquire over the ${specs.length} specs of a kline start): ${us.toFixed(2)} µs per start; the rest of the per-job cost is bottleneck's dispatch (a few timer turns).`,
  );
}

// --- 2. memory per queued job ----------------------------------------------------------------
const queued = 10_000;
const memory: [string, number][] = [];
{
  gc();
  const before = process.memoryUsage().heapUsed;
  const s = new PlanScheduler(planLimits('basic'));
  const pending = Array.from({ length: queued }, (_, i) =>
    s.schedule({ endpoint: 'kline', priority: 'backfill', sourceId: `s${i % 10}` }, job).catch(() => 0),
  );
  await new Promise((r) => setTimeout(r, 50));
  gc();
  memory.push([
    'PlanScheduler (basic plan, jobs waiting)',
    (process.memoryUsage().heapUsed - before) / queued,
  ]);
  await s.close();
  await Promise.all(pending);
}
{
  gc();
  const before = process.memoryUsage().heapUsed;
  const b = new Bottleneck({ minTime: 1_000, maxConcurrent: 1 });
  const pending = Array.from({ length: queued }, () => b.schedule(job).catch(() => 0));
  await new Promise((r) => setTimeout(r, 50));
  gc();
  memory.push([
    'raw bottleneck (minTime 1000, jobs waiting)',
    (process.memoryUsage().heapUsed - before) / queued,
  ]);
  await b.stop({ dropWaitingJobs: true });
  await Promise.all(pending);
}
console.log(`\n### Memory per queued job (${queued.toLocaleString('en')} jobs waiting)\n`);
console.log('| case | heap per queued job (bytes) |');
console.log('|---|---:|');
for (const [name, bytes] of memory) console.log(`| ${name} | ${bytes.toFixed(0)} |`);

// --- 3. real-clock backfill utilisation ------------------------------------------------------
const DURATION_MS = 15_000;
// Requests count until they settle, so each window costs one round trip: the ceiling is
// W / (W + margin + mean round trip). Two regimes: a local simulator, and a remote service.
const LATENCIES: readonly [number, number][] = [
  [1, 5],
  [30, 80],
];
console.log(
  `\n### Utilisation of a real-clock kline backfill (~${DURATION_MS / 1000} s each, defaults: margin 25 ms, smoothing 0.5, countFrom settle)\n`,
);
console.log(
  '| plan | round trip (ms) | starts | saturated span (s) | allowed rate (/s) | achieved rate (/s) | utilisation | ceiling W/(W+margin+rtt) | max starts in any window (limit) |',
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
for (const [lo, hi] of LATENCIES) {
  const runs = await Promise.all(
    (['premium', 'professional'] as const).map((plan) => backfill(plan, lo, hi)),
  );
  for (const r of runs) {
    const ceiling = 1000 / (1025 + (lo + hi) / 2);
    console.log(
      `| ${r.plan} | ${lo}–${hi} | ${r.starts} | ${r.spanS.toFixed(2)} | ${r.rate} | ${r.achieved.toFixed(2)} | ${r.utilisation.toFixed(4)} | ${ceiling.toFixed(4)} | ${r.windows} |`,
    );
  }
}

async function backfill(plan: 'premium' | 'professional', latencyLoMs: number, latencyHiMs: number) {
  const limits = planLimits(plan);
  const rate = sustainedRate(limits, 'kline');
  const s = new PlanScheduler(limits);
  const n = Math.round((rate * DURATION_MS) / 1000);
  const starts: number[] = [];
  const latency = () =>
    new Promise((r) => setTimeout(r, latencyLoMs + Math.random() * (latencyHiMs - latencyLoMs)));
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      s.schedule({ endpoint: 'kline', priority: 'backfill', sourceId: `history-${i % 8}` }, async () => {
        starts.push(performance.now());
        await latency();
      }),
    ),
  );
  await s.close();
  // Achieved rate in the saturated regime: the last k whole windows' worth of starts (k × limit
  // of the binding rule) over the time they took.
  const limit = limits.rules.find((r) => r.id === 'combined')!.limit;
  const k = Math.floor((starts.length - 1) / limit);
  const spanS = (starts[starts.length - 1]! - starts[starts.length - 1 - k * limit]!) / 1000;
  const achieved = (k * limit) / spanS;
  const windows = limits.rules
    .filter((r) => r.scope === 'all' || r.scope === 'kline')
    .map((r) => {
      let max = 0;
      for (let i = 0, j = 0; i < starts.length; i++) {
        while (starts[j]! < starts[i]! - r.windowMs) j++;
        max = Math.max(max, i - j + 1);
      }
      return `${r.id} ${max} (${r.limit})`;
    })
    .join(', ');
  return { plan, starts: n, spanS, rate, achieved, utilisation: achieved / rate, windows };
}

// --- 4. shares between sources ---------------------------------------------------------------
{
  const limits = planLimits('premium');
  const s = new PlanScheduler(limits);
  const stop = performance.now() + DURATION_MS;
  const log: { source: string; endpoint: string; atMs: number }[] = [];
  const send = (source: string, endpoint: string) => async () => {
    log.push({ source, endpoint, atMs: performance.now() });
    await new Promise((r) => setTimeout(r, 1 + Math.random() * 4));
  };
  const depth = async (lane: number) => {
    while (performance.now() < stop)
      await s.schedule(
        { endpoint: 'depth-tick', priority: 'live', sourceId: 'depth-capture' },
        send('depth-capture', `depth-tick ${lane}`),
      );
  };
  const liveKline = async () => {
    while (performance.now() < stop) {
      const started = performance.now();
      await s.schedule(
        { endpoint: 'batch-kline', priority: 'live', sourceId: 'kline-sync-live' },
        send('kline-sync-live', 'batch-kline'),
      );
      await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (performance.now() - started))));
    }
  };
  const history = async (series: number) => {
    while (performance.now() < stop)
      await s.schedule(
        { endpoint: 'kline', priority: 'backfill', sourceId: `history-${series}` },
        send(`history-${series}`, 'kline'),
      );
  };
  const all = [depth(0), depth(1), liveKline(), ...Array.from({ length: 6 }, (_, i) => history(i))];
  await new Promise((r) => setTimeout(r, DURATION_MS));
  await s.close();
  await Promise.allSettled(all);
  const bySource = new Map<string, number>();
  for (const e of log) bySource.set(e.source, (bySource.get(e.source) ?? 0) + 1);
  const combined = limits.rules.find((r) => r.id === 'combined')!;
  const spanS = (log.at(-1)!.atMs - log[0]!.atMs) / 1000;
  const achieved = (log.length - 1) / spanS;
  const windows = limits.rules
    .map((r) => {
      const starts = log
        .filter((e) => r.scope === 'all' || e.endpoint.startsWith(r.scope))
        .map((e) => e.atMs);
      let max = 0;
      for (let i = 0, j = 0; i < starts.length; i++) {
        while (starts[j]! < starts[i]! - r.windowMs) j++;
        max = Math.max(max, i - j + 1);
      }
      return `${r.id} ${max} (${r.limit})`;
    })
    .join(', ');
  console.log(
    `\n### Shares between sources (premium, real clock ~${DURATION_MS / 1000} s, round trip 1–5 ms)\n`,
  );
  console.log(
    'Sources: `depth-capture` (live /depth-tick, two requests always waiting), `kline-sync-live` (live /batch-kline once a second), `history-0..5` (backfill /kline, one request at a time each).\n',
  );
  console.log('| source | starts | share of starts |');
  console.log('|---|---:|---:|');
  for (const [source, n] of [...bySource].sort(([a], [b]) => a.localeCompare(b)))
    console.log(`| ${source} | ${n} | ${(n / log.length).toFixed(3)} |`);
  console.log(
    `\nAll sources: ${log.length} starts, ${achieved.toFixed(2)}/s of ${sustainedRate(limits, 'kline')}/s allowed (utilisation ${(achieved / (combined.limit / (combined.windowMs / 1000))).toFixed(4)}); max starts in any window: ${windows}.`,
  );
}

/** Median per-op µs of each case over interleaved rounds (alternating cases evens out machine load). */
async function measure(
  cases: [string, () => Promise<unknown>][],
  rounds: number,
  perRound: number,
): Promise<{ name: string; us: number }[]> {
  const samples = cases.map(() => [] as number[]);
  for (const [, fn] of cases) for (let i = 0; i < Math.max(1, perRound / 5); i++) await fn(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < cases.length; c++) {
      gc();
      const fn = cases[c]![1];
      const t = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) await fn();
      samples[c]!.push(Number(process.hrtime.bigint() - t) / 1e3 / perRound);
    }
  }
  return cases.map(([name], c) => ({ name, us: samples[c]!.sort((a, b) => a - b)[Math.floor(rounds / 2)]! }));
}
