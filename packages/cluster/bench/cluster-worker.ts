// A worker process for cluster.bench.ts (not a benchmark itself). Modes:
// - quota: saturates the plan with /kline requests through a SharedPlanScheduler for
//   QF_BENCH_DURATION_MS, then prints {type:'done', requests}.
// - members: clusterSync over QF_BENCH_ITEMS with a run that does nothing; prints every
//   assignment event as a JSON line. Runs until killed.
import { QuoteflowClient, planLimits, type Plan } from '@quoteflow/core';
import { ClusterMembership, SharedPlanScheduler, clusterSync } from '@quoteflow/cluster';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`bench worker: ${name} is not set`);
  return value;
};
const print = (record: Record<string, unknown>): void =>
  void process.stdout.write(`${JSON.stringify(record)}\n`);
const token = env('QF_BENCH_TOKEN');
const redis = env('QF_BENCH_REDIS_URL');
const prefix = env('QF_BENCH_PREFIX');

if (env('QF_BENCH_MODE') === 'quota') {
  const plan = env('QF_BENCH_PLAN') as Plan;
  const scheduler = new SharedPlanScheduler({
    redis,
    token,
    limits: planLimits(plan),
    keyPrefix: prefix,
    ...(process.env.QF_BENCH_MARGIN_MS === undefined
      ? {}
      : { marginMs: Number(process.env.QF_BENCH_MARGIN_MS) }),
  });
  const client = new QuoteflowClient({ baseUrl: env('QF_BENCH_BASE_URL'), token, plan, scheduler });
  const code = env('QF_BENCH_CODE');
  const until = Date.now() + Number(env('QF_BENCH_DURATION_MS'));
  let requests = 0;
  // 16 loops keep the local queue full, so the shared gate is always the bottleneck.
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < until) {
        await client.kline({ code, klineType: 1, count: 2 }, { priority: 'live' });
        requests++;
      }
    }),
  );
  print({ type: 'done', requests, stale: scheduler.stats().local.unusedStarts });
  await client.close();
  await scheduler.close();
} else {
  const membership = new ClusterMembership({
    redis,
    token,
    group: env('QF_BENCH_GROUP'),
    workerId: env('QF_BENCH_WORKER_ID'),
    heartbeatMs: Number(env('QF_BENCH_HEARTBEAT_MS')),
    keyPrefix: prefix,
  });
  const cluster = clusterSync({
    membership,
    items: env('QF_BENCH_ITEMS').split(','),
    run: (items) => {
      let resolve!: (n: number) => void;
      const done = new Promise<number>((r) => (resolve = r));
      return { done, stop: () => (resolve(items.length), done) };
    },
    onEvent: (e) => {
      if (e.type === 'assignment') print({ type: e.type, atMs: e.atMs, held: e.held });
    },
  });
  process.once('SIGTERM', () => void cluster.stop());
  await cluster.done;
}
