/**
 * Scale-out figures: the combined request rate of three worker processes sharing one token
 * through Redis, against the plan's binding limit (utilisation, target >= 0.9), next to the
 * same-process baseline (one process, in-process PlanScheduler, same plan and simulator); and the
 * takeover time after a worker is killed
 * (SIGKILL), for two heartbeat intervals; and the recovery after Redis restarts empty (three
 * saturating workers: from Redis answering again to the next request at the service).
 *
 * How fresh three workers keep a universe against one client (poll gaps, the takeover's first
 * poll) is `cluster-freshness.bench.ts`.
 *
 * Needs `redis-server` (scripts/redis/setup.sh) or REDIS_URL. Run: `pnpm bench cluster`.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { QuoteflowClient, planLimits } from '@quoteflow/core';
import { MemoryWindowStore, PlanWindows, sustainedRate } from '@quoteflow/core/internal';
import { REDIS_WINDOW_STORE_DEFAULTS, RedisWindowStore } from '@quoteflow/cluster';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { tokenLabel } from '@quoteflow/simulator/internal';
import { startRedisServer, testRedis } from '../../../test/support/redis-server.js';
import { spawnWorker } from './spawn-worker.js';

const PLAN = 'premium' as const;
const DURATION_MS = 20_000;
const WORKER = fileURLToPath(new URL('./cluster-worker.ts', import.meta.url));

/**
 * Requests per second of `token` at the simulator in the steady part of a run, and refusals.
 * Starts leave in bursts (the plan allows `burst` per window), so the rate is taken over whole
 * bursts: from one arrival to the arrival `k × burst` later, skipping the first 3 s.
 */
function rateOf(
  sim: Simulator,
  token: string,
  burst: number,
): { rate: number; requests: number; refused: number } {
  const label = tokenLabel(token, PLAN);
  const entries = sim.log.entries().filter((e) => e.token === label);
  const refused = entries.filter((e) => e.refusedBy !== undefined).length;
  const times = entries
    .filter((e) => e.refusedBy === undefined)
    .map((e) => e.arrivalMs)
    .sort((a, b) => a - b);
  const i = times.findIndex((t) => t >= times[0]! + 3_000);
  const k = Math.floor((times.length - 1 - i) / burst);
  const rate = (k * burst * 1000) / (times[i + k * burst]! - times[i]!);
  return { rate, requests: entries.length, refused };
}

async function utilisation(sim: Simulator, redisUrl: string): Promise<void> {
  const limits = planLimits(PLAN);
  const binding = sustainedRate(limits, 'kline');
  const code = 'BTCUSDT';
  const burst = limits.rules.find((r) => r.id === 'combined')!.limit;

  // Baseline: one process, the default in-process scheduler, 16 loops.
  const baseToken = `bench-base-${randomUUID()}`;
  sim.setToken(baseToken, PLAN);
  const client = new QuoteflowClient({ baseUrl: sim.url, token: baseToken, plan: PLAN });
  const until = Date.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < until) await client.kline({ code, klineType: 1, count: 2 }, { priority: 'live' });
    }),
  );
  await client.close();
  const base = rateOf(sim, baseToken, burst);

  // Three worker processes on one token through Redis, at the default margin and at core's 25 ms.
  const runCluster = async (marginMs: number | undefined) => {
    const token = `bench-cluster-${randomUUID()}`;
    sim.setToken(token, PLAN);
    const prefix = `b${randomUUID().slice(0, 8)}`;
    const workers = [1, 2, 3].map(() =>
      spawnWorker(WORKER, {
        QF_BENCH_MODE: 'quota',
        QF_BENCH_TOKEN: token,
        QF_BENCH_REDIS_URL: redisUrl,
        QF_BENCH_PREFIX: prefix,
        QF_BENCH_PLAN: PLAN,
        QF_BENCH_BASE_URL: sim.url,
        QF_BENCH_CODE: code,
        QF_BENCH_DURATION_MS: String(DURATION_MS),
        ...(marginMs === undefined ? {} : { QF_BENCH_MARGIN_MS: String(marginMs) }),
      }),
    );
    await Promise.all(workers.map((w) => w.exited));
    const done = workers.map((w) => w.lines.find((l) => l.type === 'done') ?? {});
    return {
      margin: marginMs ?? REDIS_WINDOW_STORE_DEFAULTS.marginMs,
      shares: done.map((d) => Number(d.requests ?? 0)),
      stale: done.reduce((n, d) => n + Number(d.stale ?? 0), 0),
      ...rateOf(sim, token, burst),
    };
  };
  const clusters = [await runCluster(undefined), await runCluster(25)];

  console.log(
    `Plan ${PLAN}, /kline, binding limit ${binding} req/s, ${DURATION_MS / 1000} s runs. Both count each request until it settles, so a window's slot is held for window + margin + the request's round trip: ceilings below 1000 / (1000 + margin), i.e. in-process margin 25 ms → ${(1000 / 1025).toFixed(3)}, cluster margin ${REDIS_WINDOW_STORE_DEFAULTS.marginMs} ms → ${(1000 / (1000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs)).toFixed(3)}.\n`,
  );
  console.log('| setup | requests | refused | steady rate (req/s) | utilisation |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(
    `| baseline: 1 process, in-process scheduler, margin 25 ms | ${base.requests} | ${base.refused} | ${base.rate.toFixed(2)} | ${(base.rate / binding).toFixed(3)} |`,
  );
  for (const c of clusters) {
    console.log(
      `| 3 processes, shared quota in Redis, margin ${c.margin} ms (per worker ${c.shares.join(' / ')}; grants too late to send ${c.stale}) | ${c.requests} | ${c.refused} | ${c.rate.toFixed(2)} | ${(c.rate / binding).toFixed(3)} |`,
    );
  }
  console.log(
    '\nTarget: utilisation >= 0.9 with zero refusals. A refusal pauses every worker (backoff, then paced recovery).\n',
  );
}

async function takeover(redisUrl: string, heartbeatMs: number, trials: number): Promise<number[]> {
  const items = Array.from({ length: 60 }, (_, i) => `SERIES${i}`);
  const out: number[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const prefix = `b${randomUUID().slice(0, 8)}`;
    const group = `g${trial}`;
    const workers = ['w1', 'w2', 'w3'].map((id) =>
      spawnWorker(WORKER, {
        QF_BENCH_MODE: 'members',
        QF_BENCH_TOKEN: 'bench-takeover',
        QF_BENCH_REDIS_URL: redisUrl,
        QF_BENCH_PREFIX: prefix,
        QF_BENCH_GROUP: group,
        QF_BENCH_WORKER_ID: id,
        QF_BENCH_HEARTBEAT_MS: String(heartbeatMs),
        QF_BENCH_ITEMS: items.join(','),
      }),
    );
    const held = (w: (typeof workers)[number]): string[] =>
      ([...w.lines].reverse().find((l) => l.type === 'assignment')?.held as string[]) ?? [];
    const waitFor = async (check: () => boolean): Promise<number> => {
      const deadline = Date.now() + 60_000;
      while (!check()) {
        if (Date.now() > deadline) throw new Error('bench: takeover did not happen within 60 s');
        await new Promise((r) => setTimeout(r, 5));
      }
      return Date.now();
    };
    await waitFor(
      () => workers.every((w) => held(w).length > 0) && workers.flatMap(held).length === items.length,
    );
    await new Promise((r) => setTimeout(r, 2 * heartbeatMs));
    const killedAt = Date.now();
    workers[2]!.child.kill('SIGKILL');
    const coveredAt = await waitFor(
      () => new Set([...held(workers[0]!), ...held(workers[1]!)]).size === items.length,
    );
    out.push(coveredAt - killedAt);
    for (const w of workers.slice(0, 2)) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
  }
  return out;
}

/**
 * Three workers saturate /kline; Redis stops for `downMs` and comes back without its data. Returns
 * the time from Redis answering again to the next arrival at the simulator, and the refusals.
 */
async function redisRecovery(
  sim: Simulator,
  downMs: number,
): Promise<{ recoveryMs: number; refused: number }> {
  const own = await startRedisServer();
  const token = `bench-recovery-${randomUUID()}`;
  sim.setToken(token, PLAN);
  try {
    const workers = [1, 2, 3].map(() =>
      spawnWorker(WORKER, {
        QF_BENCH_MODE: 'quota',
        QF_BENCH_TOKEN: token,
        QF_BENCH_REDIS_URL: own.url,
        QF_BENCH_PREFIX: 'qf',
        QF_BENCH_PLAN: PLAN,
        QF_BENCH_BASE_URL: sim.url,
        QF_BENCH_CODE: 'BTCUSDT',
        QF_BENCH_DURATION_MS: '14000',
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await own.stop();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await own.restart();
    const restartedAt = Date.now();
    await Promise.all(workers.map((w) => w.exited));
    const label = tokenLabel(token, PLAN);
    const entries = sim.log.entries().filter((e) => e.token === label);
    const after = entries.filter((e) => e.arrivalMs >= restartedAt).map((e) => e.arrivalMs);
    return {
      recoveryMs: after.length === 0 ? Number.NaN : Math.min(...after) - restartedAt,
      refused: entries.filter((e) => e.refusedBy !== undefined).length,
    };
  } finally {
    await own.close();
  }
}

/**
 * Per-request cost of the shared store in Redis (tryAcquire, then settle: two scripts, two round
 * trips on 127.0.0.1) against the in-process store's calls for the same windows, same run. Limits
 * raised so that nothing waits: this is the cost of the check itself. Client-side only (Redis's
 * own CPU is another process).
 */
async function storeCost(redisUrl: string, n: number): Promise<void> {
  const base = planLimits('professional');
  const limits = {
    ...base,
    perDay: 1e12,
    rules: base.rules.map((rule) => ({ ...rule, limit: 1e9 })),
  };
  const windows = new PlanWindows(limits, 25, 'Asia/Shanghai');
  const store = new MemoryWindowStore();
  let cpu = process.cpuUsage();
  let t = performance.now();
  for (let i = 0; i < n; i++) {
    const now = Date.now();
    const specs = windows.specsFor('kline', now);
    store.earliestStart(specs, now);
    const got = store.tryAcquire(specs, now);
    if (got.acquired) store.settle(got.ticket, now);
  }
  const memory = { wallUs: ((performance.now() - t) * 1000) / n, cpuUs: cpuPer(cpu, n) };
  const shared = new RedisWindowStore({ redis: redisUrl, token: `bench-store-${randomUUID()}`, limits });
  const once = async () => {
    const now = Date.now();
    const specs = windows.specsFor('kline', now);
    shared.earliestStart(specs, now);
    const got = await shared.tryAcquire(specs, now, 'kline');
    if (!got.acquired) throw new Error('bench: the shared store refused a start with limits raised');
    await shared.settle(got.ticket, Date.now());
  };
  // Connection and script load; a Redis started lately holds a newcomer for the recovery grace.
  for (;;) {
    const now = Date.now();
    const got = await shared.tryAcquire(windows.specsFor('kline', now), now, 'kline');
    if (got.acquired) {
      await shared.settle(got.ticket, Date.now());
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, got.retryAtMs - Date.now())));
  }
  cpu = process.cpuUsage();
  t = performance.now();
  for (let i = 0; i < n; i++) await once();
  const redis = { wallUs: ((performance.now() - t) * 1000) / n, cpuUs: cpuPer(cpu, n) };
  await shared.close();
  console.log(`Per-request cost of the quota check, ${n} requests in sequence, windows of professional:\n`);
  console.log('| store | wall per request (µs) | client CPU per request (µs) |');
  console.log('|---|---:|---:|');
  console.log(
    `| MemoryWindowStore, in process (baseline) | ${memory.wallUs.toFixed(1)} | ${memory.cpuUs.toFixed(1)} |`,
  );
  console.log(
    `| RedisWindowStore on 127.0.0.1 (tryAcquire + settle) | ${redis.wallUs.toFixed(1)} | ${redis.cpuUs.toFixed(1)} |`,
  );
  console.log('');
}

function cpuPer(since: NodeJS.CpuUsage, n: number): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / n;
}

const redis = await testRedis();
const sim = await startSimulator({ tokens: {}, seed: 5 });
try {
  if (process.env['BENCH_CLUSTER_ONLY'] === 'store' || process.env['BENCH_CLUSTER_ONLY'] === undefined) {
    await storeCost(redis.url, 3_000);
    if (process.env['BENCH_CLUSTER_ONLY'] === 'store') process.exit(0);
  }
  if (process.env['BENCH_CLUSTER_ONLY'] === 'recovery' || process.env['BENCH_CLUSTER_ONLY'] === undefined) {
    console.log(
      `Recovery after Redis restarts without its data (three workers saturating /kline, Redis away 1 s; grace ${REDIS_WINDOW_STORE_DEFAULTS.recoveryGraceMs} ms): from Redis answering again to the next request at the service.\n`,
    );
    console.log('| trial | recovery (ms) | refused |');
    console.log('|---:|---:|---:|');
    for (let trial = 1; trial <= 3; trial++) {
      const r = await redisRecovery(sim, 1_000);
      console.log(`| ${trial} | ${r.recoveryMs} | ${r.refused} |`);
    }
    console.log('');
    if (process.env['BENCH_CLUSTER_ONLY'] === 'recovery') process.exit(0);
  }
  await utilisation(sim, redis.url);
  console.log(
    'Takeover after SIGKILL of one of three workers (60 items), until the survivors hold all items:\n',
  );
  console.log('| heartbeat | TTL | takeover per trial (ms) | max |');
  console.log('|---:|---:|---|---:|');
  for (const heartbeatMs of [1_000, 250]) {
    const times = await takeover(redis.url, heartbeatMs, 3);
    console.log(
      `| ${heartbeatMs} ms | ${3 * heartbeatMs} ms | ${times.join(', ')} | ${Math.max(...times)} |`,
    );
  }
} finally {
  await sim.close();
  await redis.close();
}
