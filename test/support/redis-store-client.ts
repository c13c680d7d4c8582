import { type DailyWindow, type EndpointKind, type PlanLimits } from '@quoteflow/core';
import { PLAN_SCHEDULER_DEFAULTS, PlanWindows } from '@quoteflow/core/internal';
import {
  REDIS_WINDOW_STORE_DEFAULTS,
  type RedisStartTicket,
  type RedisWindowStore,
} from '@quoteflow/cluster';

/**
 * Drives a `RedisWindowStore` one start at a time, as a `PlanScheduler` would (the plan's windows
 * from core's `PlanWindows`, asking again at the store's `retryAtMs`), so a test can watch the
 * store's grants and refusals on their own.
 */
export class StoreClient {
  private readonly windows: PlanWindows;

  constructor(
    readonly store: RedisWindowStore,
    limits: PlanLimits,
    options: { readonly dailyWindow?: DailyWindow; readonly dailyResetTimeZone?: string } = {},
  ) {
    this.windows = new PlanWindows(
      limits,
      REDIS_WINDOW_STORE_DEFAULTS.marginMs,
      options.dailyResetTimeZone ?? PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
      0,
      'settle',
      options.dailyWindow ?? PLAN_SCHEDULER_DEFAULTS.dailyWindow,
      store.arrivalSpanMs,
    );
  }

  /** One attempt: the ticket, or undefined when the store refused for now. */
  async tryOnce(endpoint: EndpointKind): Promise<RedisStartTicket | undefined> {
    const now = Date.now();
    const result = await this.store.tryAcquire(this.windows.specsFor(endpoint, now), now, endpoint);
    return result.acquired ? (result.ticket as RedisStartTicket) : undefined;
  }

  /** Resolves once the store granted a start of `endpoint`; rejects when `signal` aborts first. */
  async acquire(endpoint: EndpointKind, signal?: AbortSignal): Promise<RedisStartTicket> {
    for (;;) {
      signal?.throwIfAborted();
      const now = Date.now();
      const result = await this.store.tryAcquire(this.windows.specsFor(endpoint, now), now, endpoint);
      if (result.acquired) return result.ticket as RedisStartTicket;
      await sleep(Math.max(1, Math.min(result.retryAtMs - Date.now(), 250)));
    }
  }

  settle(ticket: RedisStartTicket): Promise<void> {
    return this.store.settle(ticket, Date.now());
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
