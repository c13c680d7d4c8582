import {
  PLAN_SCHEDULER_DEFAULTS,
  PlanScheduler,
  type EndpointKind,
  type PlanSchedulerOptions,
  type PlanSchedulerStats,
  type RequestScheduler,
  type ScheduledRequest,
} from '@quoteflow/core';
import { ClusterError } from './cluster-error.js';
import { RedisQuota } from './redis-quota.js';
import { REDIS_QUOTA_DEFAULTS, type RedisQuotaOptions, type RedisQuotaStats } from './redis-quota-options.js';

/** Options of {@link SharedPlanScheduler}: the shared quota's, plus the local scheduler's. */
export interface SharedPlanSchedulerOptions extends RedisQuotaOptions {
  /**
   * Options of the local `PlanScheduler` (ordering, fairness, in-flight cap, rate-limit pause).
   * Its `countFrom` defaults to `'start'` here: the shared quota already counts every request
   * until it settled, and the local windows only order this process's jobs.
   */
  readonly local?: Omit<PlanSchedulerOptions, 'marginMs' | 'dailyResetTimeZone' | 'dailyWindow'>;
}

/** Local and shared statistics of a {@link SharedPlanScheduler}. */
export interface SharedPlanSchedulerStats {
  readonly local: PlanSchedulerStats;
  readonly shared: RedisQuotaStats;
  /** Reservations not used because they were stale by the time `send` could run. */
  readonly staleReservations: number;
}

/**
 * A {@link RequestScheduler} for one of several workers on one token: the local `PlanScheduler`
 * orders this process's requests (live before backfill, round-robin across sources, the in-flight
 * cap, the pause after a rate-limit answer), and every request additionally needs a reservation in
 * the {@link RedisQuota} shared by all workers before `send` runs, and is settled in it when `send`
 * settles. No request leaves without a successful atomic reservation, and each counts in the
 * shared windows until its answer came back, so the workers together respect every limit of the
 * plan whatever the network does; while Redis is away, requests wait.
 *
 * @example
 * ```ts
 * const scheduler = new SharedPlanScheduler({ redis: 'redis://127.0.0.1:6379', token, limits: planLimits('premium') });
 * const client = new QuoteflowClient({ baseUrl, token, plan: 'premium', scheduler });
 * // …
 * await scheduler.close();
 * ```
 */
export class SharedPlanScheduler implements RequestScheduler, AsyncDisposable {
  readonly local: PlanScheduler;
  readonly quota: RedisQuota;
  private staleReservations = 0;
  private closing: Promise<void> | undefined;
  private readonly closeController = new AbortController();

  constructor(options: SharedPlanSchedulerOptions) {
    this.quota = new RedisQuota(options);
    this.local = new PlanScheduler(options.limits, {
      countFrom: 'start',
      ...options.local,
      marginMs: options.marginMs ?? REDIS_QUOTA_DEFAULTS.marginMs,
      dailyResetTimeZone: options.dailyResetTimeZone ?? PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
      dailyWindow: options.dailyWindow ?? PLAN_SCHEDULER_DEFAULTS.dailyWindow,
    });
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Runs `send` once the local scheduler lets the job start and the shared quota has reserved the
   * start. Rejects like `PlanScheduler.schedule`, and with `ClusterError` `QF_CLUSTER_CLOSED` when
   * closed while waiting for the reservation.
   */
  schedule<T>(request: ScheduledRequest, send: () => Promise<T>): Promise<T> {
    return this.local.schedule(request, async () => {
      const signal =
        request.signal === undefined
          ? this.closeController.signal
          : AbortSignal.any([request.signal, this.closeController.signal]);
      for (;;) {
        const reservation = await this.quota.reserve(request.endpoint, {
          priority: request.priority,
          signal,
        });
        // Nothing may run between this check and `send` (same synchronous continuation).
        if (this.quota.lagMs(reservation) <= this.quota.staleAfterMs) {
          let sent: Promise<T>;
          try {
            sent = send();
          } catch (error) {
            void this.quota.settle(reservation);
            throw error;
          }
          // The answer (or failure) is back: the request has arrived by now.
          return sent.finally(() => void this.quota.settle(reservation));
        }
        this.staleReservations++;
        void this.quota.settle(reservation); // never sent
      }
    });
  }

  /** Pauses this process (local backoff) and every worker of the token (shared pause). */
  reportRateLimited(endpoint: EndpointKind): void {
    this.local.reportRateLimited(endpoint);
    const until = this.local.stats().pausedUntilMs;
    const pauseMs = until === undefined ? (this.local.options.rateLimitBackoffMs ?? 0) : until - Date.now();
    void this.quota.reportRateLimited(pauseMs);
  }

  stats(): SharedPlanSchedulerStats {
    return {
      local: this.local.stats(),
      shared: this.quota.stats(),
      staleReservations: this.staleReservations,
    };
  }

  /**
   * Rejects queued jobs and waiting reservations (`QF_CLOSED` / `QF_CLUSTER_CLOSED`), waits for the
   * requests in flight to settle (and their settles to reach Redis), then closes the shared
   * quota. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const local = this.local.close();
      this.closeController.abort(
        new ClusterError('QF_CLUSTER_CLOSED', 'shared quota: closed before the request could be reserved'),
      );
      await local;
      await this.quota.close();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
