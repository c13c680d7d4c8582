import { hostname } from 'node:os';
import { createHash, randomUUID } from 'node:crypto';
import { type PlanLimits } from '@quoteflow/core';
import { retryWithBudget } from '@quoteflow/core/internal';
import { ClusterError } from './cluster-error.js';
import { describeRedisError } from './internal/describe-redis-error.js';
import { ClusterMembership } from './cluster-membership.js';
import {
  clusterSync,
  type ClusterSyncEvent,
  type ClusterSyncHandle,
  type ShareableRun,
  type WorkLease,
} from './cluster-sync.js';
import { redactRedisUrl } from './internal/redact-redis-url.js';
import { SharedPlanScheduler } from './shared-plan-scheduler.js';
import type { RedisQuotaEvent, RedisWindowStoreOptions } from './redis-window-store-options.js';

/** Options of {@link ClusterWorker}. */
export interface ClusterWorkerOptions {
  /** `redis://[user:password@]host:port[/db]`; the same for every worker. */
  readonly redis: string;
  readonly token: string;
  /** The plan's limits; every worker of the token must pass the same. */
  readonly limits: PlanLimits;
  /** Names the shared work (see {@link syncGroupName}); workers divide items only within a group. */
  readonly group: string;
  /** @defaultValue 1,000 ms (a crashed worker's items move within about 3 s) */
  readonly heartbeatMs?: number;
  /** Window margin of the shared quota, in ms. @defaultValue 10 */
  readonly marginMs?: number;
  /**
   * The client's request timeouts, if not `QuoteflowClient`'s defaults: they bound how long an
   * unsettled request of a dead worker counts (see `RedisWindowStore`).
   */
  readonly timeouts?: RedisWindowStoreOptions['timeouts'];
  readonly dailyResetTimeZone?: string;
  /** This worker's id in every group it shares work in. @defaultValue `<host>~<pid>~<random>` */
  readonly workerId?: string;
  readonly keyPrefix?: string;
  /**
   * Quota and assignment events (Redis lost/back, members, assignments); never carries the token.
   * Those of a share come with its group (the worker's, or the one `share` was given).
   */
  readonly onEvent?: (event: RedisQuotaEvent | ClusterSyncEvent, group?: string) => void;
}

/**
 * The group name of a K-line sync: a hash of its sorted codes and kline types, so workers started
 * with the same `--codes` and `--kline-types` share one group and other syncs on the token do not
 * interfere.
 *
 * @example syncGroupName(['AAPL.US', 'BTCUSDT'], [1, 8]) // 'kline-sync:3f0c…'
 */
export function syncGroupName(codes: readonly string[], klineTypes: readonly number[]): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([[...codes].sort(), [...klineTypes].sort((a, b) => a - b)]))
    .digest('hex')
    .slice(0, 16);
  return `kline-sync:${hash}`;
}

/**
 * One worker of a scaled-out deployment, the piece `quoteflow sync --redis URL` needs: a
 * {@link SharedPlanScheduler} to hand to the client (the plan shared by every worker of the
 * token) and {@link ClusterWorker.share} to run a sync over this worker's share of the items.
 *
 * @example
 * ```ts
 * const limits = planLimits(plan);
 * const worker = new ClusterWorker({ redis: url, token, limits, group: syncGroupName(codes, klineTypes) });
 * const client = new QuoteflowClient({ baseUrl, token, plan, scheduler: worker.scheduler });
 * const units = batchKlineUnits(codes, klineTypes, limits);
 * const cluster = worker.share(codes, (mine) => klineSync({ client, codes: mine, klineTypes, files: { dir: out } }), { signal, units });
 * const summaries = await cluster.done; // one summary per run (a run restarts on every reassignment)
 * await client.close();
 * await worker.close();
 * ```
 */
export class ClusterWorker implements AsyncDisposable {
  readonly scheduler: SharedPlanScheduler;
  /** This worker's id, the same in every group it shares work in (its Kafka sinks are named by it). */
  readonly workerId: string;
  private readonly options: ClusterWorkerOptions;
  private readonly handles = new Set<ClusterSyncHandle<unknown>>();

  constructor(options: ClusterWorkerOptions) {
    this.options = options;
    this.workerId = options.workerId ?? `${hostname()}~${process.pid}~${randomUUID().slice(0, 8)}`;
    this.scheduler = new SharedPlanScheduler({
      redis: options.redis,
      token: options.token,
      limits: options.limits,
      ...(options.marginMs === undefined ? {} : { marginMs: options.marginMs }),
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.dailyResetTimeZone === undefined ? {} : { dailyResetTimeZone: options.dailyResetTimeZone }),
      ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    });
  }

  /**
   * Resolves once Redis answers; rejects with `ClusterError` `QF_REDIS_UNREACHABLE` (naming Redis,
   * never its password) when it has not answered within `timeoutMs`, so a worker pointed at the
   * wrong address fails loudly instead of waiting for ever. Asks every 500 ms.
   */
  async connect(options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<void> {
    try {
      await retryWithBudget(() => this.scheduler.store.ping(), {
        budgetMs: options.timeoutMs,
        baseDelayMs: 500,
        maxDelayMs: 500,
        jitter: 'none',
        retryable: () => true,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      throw new ClusterError(
        'QF_REDIS_UNREACHABLE',
        `Redis at ${redactRedisUrl(this.options.redis)} did not answer within ${Math.round(options.timeoutMs / 1000)} s: ${describeRedisError(error)}`,
        { cause: error },
      );
    }
  }

  /**
   * Runs `run` over this worker's share of `items` and follows membership changes (see
   * {@link clusterSync}). Every worker of the group must pass the same `items` (and `units`).
   * `options.group` overrides the worker's group (one worker may share several pieces of work, one
   * group each); `options.units` are items that move together (for a K-line sync,
   * `batchKlineUnits`: whole `/batch-kline` requests).
   */
  share<S>(
    items: readonly string[],
    run: (mine: readonly string[], lease: WorkLease) => ShareableRun<S>,
    options: {
      readonly signal?: AbortSignal;
      readonly group?: string;
      readonly units?: readonly (readonly string[])[];
    } = {},
  ): ClusterSyncHandle<S> {
    const o = this.options;
    const group = options.group ?? o.group;
    const membership = new ClusterMembership({
      redis: o.redis,
      token: o.token,
      group,
      workerId: this.workerId,
      ...(o.heartbeatMs === undefined ? {} : { heartbeatMs: o.heartbeatMs }),
      ...(o.keyPrefix === undefined ? {} : { keyPrefix: o.keyPrefix }),
    });
    const handle = clusterSync({
      membership,
      items,
      run,
      ...(options.units === undefined ? {} : { units: options.units }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(o.onEvent === undefined ? {} : { onEvent: (e: ClusterSyncEvent) => o.onEvent!(e, group) }),
    });
    this.handles.add(handle as ClusterSyncHandle<unknown>);
    return handle;
  }

  /** Stops every share (flush, release, leave), then closes the scheduler. Idempotent. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.handles].map((h) => h.stop()));
    this.handles.clear();
    await this.scheduler.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
