import type { EndpointKind } from './plans.js';

/**
 * Live polling goes before history backfill, but backfill keeps a reserved share of the starts
 * (one in five by default, `PlanSchedulerOptions.backfillShare`) while it has work waiting, so a
 * busy live poller never stops a history sync.
 */
export const PRIORITIES = ['live', 'backfill'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** What the scheduler needs to know about one request before it may leave. */
export interface ScheduledRequest {
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
  /**
   * Which source asked (a poller, one backfill series): the sources of one priority share the
   * plan's starts fairly, across endpoints (least recently served first), and the scheduler's
   * stats report each one. Requests without one share the source `''`.
   */
  readonly sourceId?: string;
  /** Aborting removes a queued job (its promise rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/**
 * The contract between the client and the plan scheduler: every request to the service goes
 * through `schedule`, which starts `send` only when every limit of the plan allows one more
 * request arrival. One scheduler exists per token and is shared by every client and source.
 */
export interface RequestScheduler {
  schedule<T>(request: ScheduledRequest, send: () => Promise<T>): Promise<T>;
  /** The service answered "rate limit" anyway: slow down, then recover without user action. */
  reportRateLimited(endpoint: EndpointKind): void;
}
