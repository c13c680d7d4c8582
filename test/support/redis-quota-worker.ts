// A worker process for test/cluster-quota.test.ts: requests through a SharedPlanScheduler on one
// token, printing one JSON line per request (when it left, when its answer came back).
// - Without QF_TEST_BASE_URL: `JOBS` jobs of the endpoints in `ENDPOINTS`, each answered after
//   50-100 ms by the worker itself.
// - With QF_TEST_BASE_URL (a simulator): `LOOPS` loops of real `/kline` requests for
//   `DURATION_MS`, enough to keep the plan's quota the bottleneck.
import {
  QuoteflowClient,
  planLimits,
  type EndpointKind,
  type Plan,
  type RequestScheduler,
} from '@quoteflow/core';
import { SharedPlanScheduler } from '@quoteflow/cluster';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker: ${name} is not set`);
  return value;
};
const print = (record: Record<string, unknown>): void =>
  void process.stdout.write(`${JSON.stringify({ pid: process.pid, ...record })}\n`);

const token = env('QF_TEST_TOKEN');
const plan = env('QF_TEST_PLAN') as Plan;
const shared = new SharedPlanScheduler({
  redis: env('QF_TEST_REDIS_URL'),
  token,
  limits: planLimits(plan),
  keyPrefix: env('QF_TEST_PREFIX'),
});
const scheduler: RequestScheduler = {
  schedule: (request, send) =>
    shared.schedule(request, () => {
      const startMs = Date.now();
      return send().finally(() => print({ startMs, settleMs: Date.now(), endpoint: request.endpoint }));
    }),
  reportRateLimited: (endpoint) => shared.reportRateLimited(endpoint),
};
const baseUrl = process.env.QF_TEST_BASE_URL;
if (baseUrl === undefined) {
  const endpoints = env('QF_TEST_ENDPOINTS').split(',') as EndpointKind[];
  await Promise.all(
    Array.from({ length: Number(env('QF_TEST_JOBS')) }, (_, i) =>
      scheduler.schedule(
        { endpoint: endpoints[i % endpoints.length]!, priority: 'backfill' },
        () => new Promise<void>((resolve) => setTimeout(resolve, 50 + ((process.pid * 7 + i * 13) % 51))),
      ),
    ),
  );
} else {
  const client = new QuoteflowClient({ baseUrl, token, plan, scheduler, retry: { maxAttempts: 1 } });
  const until = Date.now() + Number(env('QF_TEST_DURATION_MS'));
  await Promise.all(
    Array.from({ length: Number(env('QF_TEST_LOOPS')) }, async () => {
      while (Date.now() < until)
        await client.kline({ code: 'BTCUSDT', klineType: 1, count: 2 }, { priority: 'live' });
    }),
  );
  await client.close();
}
await shared.close();
