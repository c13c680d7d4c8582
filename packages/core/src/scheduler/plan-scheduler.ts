import type { EndpointKind, PlanLimits } from '../plans.js';
import type { RequestScheduler, ScheduledRequest } from '../request-scheduler.js';

/** Options of {@link PlanScheduler} (work in progress: the stub only forwards calls). */
export interface PlanSchedulerOptions {
  /** IANA time zone whose midnight resets the daily total. */
  readonly dailyResetTimeZone?: string;
  /** Extra spacing added to every window, against network jitter. */
  readonly marginMs?: number;
}

/** Plan-limited request scheduler (stub: the real gate lands in the next commit). */
export class PlanScheduler implements RequestScheduler {
  readonly limits: PlanLimits;
  constructor(limits: PlanLimits, _options: PlanSchedulerOptions = {}) {
    this.limits = limits;
  }
  schedule<T>(request: ScheduledRequest, send: () => Promise<T>): Promise<T> {
    if (request.signal?.aborted === true) return Promise.reject(request.signal.reason);
    return send();
  }
  reportRateLimited(_endpoint: EndpointKind): void {}
  async close(): Promise<void> {}
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The process-wide scheduler of `token` (stub). */
export function sharedSchedulerFor(_token: string, limits: PlanLimits, options?: PlanSchedulerOptions): PlanScheduler {
  return new PlanScheduler(limits, options);
}
