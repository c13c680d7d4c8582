// A worker process for test/cluster-quota.test.ts: schedules `JOBS` requests of the endpoints in
// `ENDPOINTS` through a SharedPlanScheduler on one token and prints one JSON line per request (when
// it left, when its 50-100 ms answer came back).
import { planLimits, type EndpointKind, type Plan } from '@quoteflow/core';
import { SharedPlanScheduler } from '@quoteflow/cluster';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker: ${name} is not set`);
  return value;
};

const scheduler = new SharedPlanScheduler({
  redis: env('QF_TEST_REDIS_URL'),
  token: env('QF_TEST_TOKEN'),
  limits: planLimits(env('QF_TEST_PLAN') as Plan),
  keyPrefix: env('QF_TEST_PREFIX'),
});
const endpoints = env('QF_TEST_ENDPOINTS').split(',') as EndpointKind[];
const jobs = Number(env('QF_TEST_JOBS'));
await Promise.all(
  Array.from({ length: jobs }, (_, i) =>
    scheduler.schedule({ endpoint: endpoints[i % endpoints.length]!, priority: 'backfill' }, async () => {
      const startMs = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 50 + ((process.pid * 7 + i * 13) % 51)));
      const settleMs = Date.now();
      const endpoint = endpoints[i % endpoints.length];
      process.stdout.write(`${JSON.stringify({ startMs, settleMs, endpoint, pid: process.pid })}\n`);
    }),
  ),
);
await scheduler.close();
