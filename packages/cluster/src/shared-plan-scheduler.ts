import {
  PlanScheduler,
  type DailyBudget,
  type EndpointKind,
  type PlanSchedulerOptions,
  type PlanSchedulerStats,
  type RequestScheduler,
  type ScheduledRequest,
} from '@quoteflow/core';
import { PLAN_SCHEDULER_DEFAULTS } from '@quoteflow/core/internal';
import { RedisWindowStore } from './redis-window-store.js';
import {
  REDIS_WINDOW_STORE_DEFAULTS,
  type RedisWindowStoreOptions,
  type RedisWindowStoreStats,
} from './redis-window-store-options.js';

/** Options of {@link SharedPlanScheduler}: the shared store's, plus the scheduler's. */
export interface SharedPlanSchedulerOptions extends Omit<RedisWindowStoreOptions, 'clock'> {
  /**
   * Options of the `PlanScheduler` (ordering, fairness, in-flight cap, rate-limit pause, clock).
   * The windows' margin, reset zone and daily reading are the store's (`marginMs`, …); every
   * request counts until it settled (`countFrom: 'settle'`, not an option here).
   */
  readonly local?: Omit<
    PlanSchedulerOptions,
    'marginMs' | 'dailyResetTimeZone' | 'dailyWindow' | 'store' | 'countFrom'
  >;
}

/** Statistics of a {@link SharedPlanScheduler}: its scheduler's, and its share of the store. */
export interface SharedPlanSchedulerStats {
  /** The scheduler (queues, waits, this process's starts; `unusedStarts`: grants too late to send). */
  readonly local: PlanSchedulerStats;
  readonly shared: RedisWindowStoreStats;
}

/**
 * A {@link RequestScheduler} for one of several workers on one token: core's `PlanScheduler`
 * (live before backfill, round-robin across sources, the in-flight cap, the pause after a
 * rate-limit answer) over a {@link RedisWindowStore}, the plan's windows shared by every worker in
 * Redis. The same engine as one process's, with the third store: no request leaves without an
 * atomic check-and-record in Redis, and each counts in the shared windows until its answer came
 * back, so the workers together respect every limit of the plan whatever the network does; while
 * Redis is away, requests wait. A rate-limit answer pauses every worker (a shared pause in Redis).
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
  readonly store: RedisWindowStore;
  private closing: Promise<void> | undefined;

  constructor(options: SharedPlanSchedulerOptions) {
    const clock = options.local?.clock;
    this.store = new RedisWindowStore({ ...options, ...(clock === undefined ? {} : { clock }) });
    this.local = new PlanScheduler(options.limits, {
      ...options.local,
      store: this.store,
      countFrom: 'settle',
      marginMs: options.marginMs ?? REDIS_WINDOW_STORE_DEFAULTS.marginMs,
      dailyResetTimeZone: options.dailyResetTimeZone ?? PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
      dailyWindow: options.dailyWindow ?? PLAN_SCHEDULER_DEFAULTS.dailyWindow,
    });
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Runs `send` once every shared window allows it; rejects like `PlanScheduler.schedule`. */
  schedule<T>(request: ScheduledRequest, send: () => Promise<T>): Promise<T> {
    return this.local.schedule(request, send);
  }

  /** Pauses this process (its scheduler's backoff) and every worker of the token (shared pause). */
  reportRateLimited(endpoint: EndpointKind): void {
    this.local.reportRateLimited(endpoint);
    const stats = this.local.stats();
    const until = stats.pausedUntilMs;
    const pauseMs = until === undefined ? this.local.options.rateLimitBackoffMs : until - stats.atMs;
    void this.store.reportRateLimited(pauseMs);
  }

  /**
   * The token's daily budget as every worker used it (the shared day counter as last read from
   * Redis, at most a watch interval old, plus this process's starts since): used, limit, and once
   * the day's count reached the limit, when the day resets. Redis still decides every start.
   */
  dailyBudget(): DailyBudget {
    return this.local.dailyBudget();
  }

  stats(): SharedPlanSchedulerStats {
    return { local: this.local.stats(), shared: this.store.stats() };
  }

  /**
   * Rejects queued jobs (`QF_CLOSED`), waits for the requests in flight to settle (and their
   * settles to reach Redis), then closes the store. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.local.close();
      await this.store.close();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
