// A sync worker process for test/cluster-sync.test.ts and the cluster bench: klineSync over the
// codes this worker holds in the group, every request through a SharedPlanScheduler. Prints one
// JSON line per cluster event on stdout; SIGTERM stops it (flush, release, leave) and exits 0.
// With QF_TEST_REDIS_URL empty it is one client instead (what `quoteflow sync` without --redis
// runs): klineSync over every code, the in-process scheduler, for comparisons.
// With QF_TEST_CLOCK (shared-clock.ts) the client and the sync run on the test's shared clock
// (market time, as the simulator's), and QF_TEST_COMMIT_MS and QF_TEST_REFRESH_MS are on it too;
// membership, leases and the shared quota stay on the real clock (Redis's).
import {
  QuoteflowClient,
  isKlineType,
  planLimits,
  type KlineType,
  type Plan,
  type RequestScheduler,
} from '@quoteflow/core';
import { ClusterWorker, batchKlineUnits, type WorkLease } from '@quoteflow/cluster';
import { klineSync, type KlineSyncHandle } from '@quoteflow/pipelines';
import { clockFromEnv } from './shared-clock.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker: ${name} is not set`);
  return value;
};
const print = (record: Record<string, unknown>): void =>
  void process.stdout.write(`${JSON.stringify({ pid: process.pid, ...record })}\n`);

const token = env('QF_TEST_TOKEN');
const plan = env('QF_TEST_PLAN') as Plan;
const klineTypes = env('QF_TEST_KLINE_TYPES').split(',').map(Number).filter(isKlineType) as KlineType[];
const codes = env('QF_TEST_CODES').split(',');
// QF_TEST_BATCH_GROUPS: fewer groups per /batch-kline request than the plan's, so that a small
// universe takes several requests (and several workers hold a part of it).
const limitOverrides =
  process.env.QF_TEST_BATCH_GROUPS === undefined
    ? {}
    : { batchKlineGroups: Number(process.env.QF_TEST_BATCH_GROUPS) };
const limits = planLimits(plan, limitOverrides);
const redisUrl = env('QF_TEST_REDIS_URL');
const worker =
  redisUrl === ''
    ? undefined
    : new ClusterWorker({
        redis: redisUrl,
        token,
        limits,
        group: env('QF_TEST_GROUP'),
        workerId: env('QF_TEST_WORKER_ID'),
        heartbeatMs: Number(env('QF_TEST_HEARTBEAT_MS')),
        ...(process.env.QF_TEST_MARGIN_MS === undefined
          ? {}
          : { marginMs: Number(process.env.QF_TEST_MARGIN_MS) }),
        keyPrefix: env('QF_TEST_PREFIX'),
        onEvent: (e) => print({ ...e, ...('error' in e ? { error: String(e.error) } : {}) }),
      });
// Every request of a worker, stamped right before it leaves and right after its answer (or
// failure) came back, for the test's independent window check.
let requestId = 0;
const scheduler: RequestScheduler | undefined =
  worker === undefined
    ? undefined
    : {
        schedule: (request, send) =>
          worker.scheduler.schedule(request, () => {
            const id = ++requestId;
            print({
              type: 'start',
              id,
              atMs: Date.now(),
              endpoint: request.endpoint,
              sourceId: request.sourceId,
            });
            return send().finally(() => print({ type: 'settle', id, atMs: Date.now() }));
          }),
        reportRateLimited: (endpoint) => worker.scheduler.reportRateLimited(endpoint),
      };
const clock = clockFromEnv();
const client = new QuoteflowClient({
  baseUrl: env('QF_TEST_BASE_URL'),
  token,
  plan,
  limitOverrides,
  ...(scheduler === undefined ? {} : { scheduler }),
  ...(clock === undefined ? {} : { clock }),
});

/** The sync over `mine`, committing only while the worker holds its lease (if it is one). */
function sync(mine: readonly string[], lease?: WorkLease): KlineSyncHandle {
  return klineSync({
    client,
    codes: mine,
    klineTypes,
    bars: Number(env('QF_TEST_BARS')),
    files: {
      dir: env('QF_TEST_OUT'),
      format: 'ndjson',
      maxFileAgeMs: Number(process.env.QF_TEST_COMMIT_MS ?? 1_000),
      // QF_TEST_NO_FENCE: to show what the fence prevents.
      ...(process.env.QF_TEST_NO_FENCE === '1' || lease === undefined ? {} : { fence: lease.valid }),
    },
    // Without QF_TEST_REFRESH_MS: the plan's pace (close-aware polling's default).
    ...(process.env.QF_TEST_REFRESH_MS === undefined
      ? {}
      : { refreshPeriodMs: Number(process.env.QF_TEST_REFRESH_MS) }),
    checkpointMs: Number(process.env.QF_TEST_COMMIT_MS ?? 1_000),
    onEvent: (e) => {
      if (e.type === 'warning') print({ type: 'sync-warning', message: e.message, error: String(e.error) });
    },
  });
}

const running =
  worker === undefined
    ? sync(codes)
    : // Whole /batch-kline requests, as `quoteflow sync --redis` divides them.
      worker.share(codes, sync, { units: batchKlineUnits(codes, klineTypes, limits) });

process.once('SIGTERM', () => void running.stop());
try {
  const summaries = [await running.done].flat();
  print({ type: 'done', atMs: Date.now(), closedBars: summaries.reduce((n, s) => n + s.closedBars, 0) });
} catch (error) {
  print({ type: 'failed', atMs: Date.now(), error: String(error) });
  process.exitCode = 1;
} finally {
  await client.close();
  await worker?.close();
}
