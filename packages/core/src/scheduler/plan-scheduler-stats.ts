import type { EndpointKind, WindowRule } from '../plans.js';
import type { Priority } from '../request-scheduler.js';

/** Wait statistics of one priority (queue entry to start). */
export interface WaitStats {
  readonly started: number;
  readonly meanWaitMs: number;
  readonly maxWaitMs: number;
}

/** One rule's state: starts in the window that ends now (nominal window, margin not included). */
export interface RuleStats {
  readonly id: string;
  readonly scope: WindowRule['scope'];
  readonly windowMs: number;
  readonly limit: number;
  readonly startsInWindow: number;
  /** `startsInWindow / limit`. */
  readonly fill: number;
}

/** A snapshot of `PlanScheduler.stats()`. */
export interface PlanSchedulerStats {
  readonly atMs: number;
  readonly queued: Readonly<Record<Priority, number>>;
  readonly inFlight: number;
  readonly waits: Readonly<Record<Priority, WaitStats>>;
  readonly startedPerEndpoint: Readonly<Partial<Record<EndpointKind, number>>>;
  readonly rules: readonly RuleStats[];
  readonly day: { readonly starts: number; readonly limit: number; readonly resetsAtMs: number };
  readonly rateLimitReports: number;
  /** Set while starts are paused after a "rate limit" answer. */
  readonly pausedUntilMs: number | undefined;
  /** Set while starts are paced after a pause. */
  readonly recoveringUntilMs: number | undefined;
  /**
   * How close the plan is to its binding rule right now: the largest `fill` of any rule. On a
   * saturated backlog it stays near `windowMs / (windowMs + marginMs)`.
   */
  readonly utilisation: number;
  /**
   * Every source served or queued, ordered by `sourceId`. Sources idle for a while are forgotten
   * once more than a few hundred are known (ids made per subscription would grow without end).
   */
  readonly sources: readonly SourceStats[];
  /** The window of {@link SourceStats.recentShare}, in ms. */
  readonly sourceShareWindowMs: number;
}

/** Starts of one source to one endpoint at one priority. */
export interface SourceRequestStats {
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
  readonly granted: number;
}

/** One wait bucket, cumulative like a Prometheus histogram bucket. */
export interface WaitBucket {
  /** Upper bound in ms (`Infinity` for the last bucket). */
  readonly leMs: number;
  /** Starts that waited at most `leMs`. */
  readonly count: number;
  /** Their total wait in ms (so an exporter can replay the waits with an exact sum). */
  readonly sumMs: number;
}

/** Wait statistics of one source, queue entry to start. */
export interface SourceWaitStats {
  readonly count: number;
  readonly sumMs: number;
  readonly maxMs: number;
  /**
   * Cumulative buckets, upper bounds 10, 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30, 60, 300 s and
   * `Infinity` (which holds every start).
   */
  readonly buckets: readonly WaitBucket[];
}

/** What the scheduler has done for one `sourceId`. */
export interface SourceStats {
  /** The `sourceId` of its requests (`''` for requests without one). */
  readonly sourceId: string;
  /** Jobs queued now (both priorities). */
  readonly queued: number;
  /** Jobs started and not settled yet. */
  readonly inFlight: number;
  /** Starts since the scheduler was built. */
  readonly granted: number;
  /** `granted`, per endpoint and priority. */
  readonly requests: readonly SourceRequestStats[];
  /** Starts within the last `sourceShareWindowMs`. */
  readonly recentGranted: number;
  /** `recentGranted` over every source's starts in that window (0 when there were none). */
  readonly recentShare: number;
  readonly wait: SourceWaitStats;
}
