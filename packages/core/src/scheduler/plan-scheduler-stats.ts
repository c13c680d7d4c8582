import type { EndpointKind, PlanLimits, WindowRule } from '../plans.js';
import type { Priority } from '../request-scheduler.js';
import type { CalendarDay } from './internal/plan-windows.js';
import type { RateLimitBackoff } from './internal/rate-limit-backoff.js';
import type { RollingWindowSpec, WindowSpec, WindowStore } from './window-store.js';

/** The token's daily total as `PlanScheduler.dailyBudget()` reads it. */
export interface DailyBudget {
  /** Requests counted against it now: the larger count of the calendar day and the rolling 24 hours. */
  readonly used: number;
  /** The plan's requests per day. */
  readonly limit: number;
  /** No request may start until the daily total allows one again (at {@link resetsAtMs}). */
  readonly spent: boolean;
  /** When a request may start again (epoch ms, the scheduler's clock); `undefined` while not spent. */
  readonly resetsAtMs: number | undefined;
}

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
  /** Starts in the rolling 24 hours (its window, margin and in-flight bound included), unless `dailyWindow` is `'calendar'`. */
  readonly rollingDay: { readonly starts: number; readonly limit: number } | undefined;
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
  /**
   * Starts an asynchronous store granted too late to be sent (`WindowStore.sendWithinMs`: the event
   * loop or the store stalled), given back unused and acquired again.
   */
  readonly unusedStarts: number;
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

/** The window of each source's share of recent starts in `PlanScheduler.stats()`, in ms. */
export const SOURCE_SHARE_WINDOW_MS = 60_000;

/** Starts since the scheduler was built: waits (queue entry to start) per priority, and per endpoint. */
export class StartTally {
  private readonly waits = {
    live: { started: 0, totalMs: 0, maxMs: 0 },
    backfill: { started: 0, totalMs: 0, maxMs: 0 },
  };
  private readonly perEndpoint: Partial<Record<EndpointKind, number>> = {};

  /** One start of `endpoint` at `priority` after waiting `waitMs`. */
  started(priority: Priority, endpoint: EndpointKind, waitMs: number): void {
    const wait = this.waits[priority];
    wait.started++;
    wait.totalMs += waitMs;
    wait.maxMs = Math.max(wait.maxMs, waitMs);
    this.perEndpoint[endpoint] = (this.perEndpoint[endpoint] ?? 0) + 1;
  }

  waitStats(): Record<Priority, WaitStats> {
    const waitStats = (w: { started: number; totalMs: number; maxMs: number }): WaitStats => ({
      started: w.started,
      meanWaitMs: w.started === 0 ? 0 : w.totalMs / w.started,
      maxWaitMs: w.maxMs,
    });
    return { live: waitStats(this.waits.live), backfill: waitStats(this.waits.backfill) };
  }

  startedPerEndpoint(): Partial<Record<EndpointKind, number>> {
    return { ...this.perEndpoint };
  }
}

/** What {@link planSchedulerStats} reads of a scheduler. */
export interface PlanSchedulerState {
  readonly limits: PlanLimits;
  readonly store: WindowStore;
  /** The calendar day (reset time zone) that contains `atMs`. */
  readonly day: CalendarDay;
  readonly rollingDay: RollingWindowSpec | undefined;
  readonly queued: Readonly<Record<Priority, number>>;
  readonly inFlight: number;
  readonly tally: StartTally;
  readonly backoff: RateLimitBackoff;
  readonly sources: readonly SourceStats[];
  readonly unusedStarts: number;
}

/**
 * The snapshot of `PlanScheduler.stats()` at `atMs`. Rule windows are counted over the nominal
 * window (margin not included), so `fill` reads against the plan as published.
 */
export function planSchedulerStats(atMs: number, state: PlanSchedulerState): PlanSchedulerStats {
  const rules = state.limits.rules.map((rule) => {
    const spec: WindowSpec = {
      kind: 'sliding',
      key: `rule:${rule.id}`,
      windowMs: rule.windowMs,
      limit: rule.limit,
    };
    const startsInWindow = state.store.count(spec, atMs);
    return {
      id: rule.id,
      scope: rule.scope,
      windowMs: rule.windowMs,
      limit: rule.limit,
      startsInWindow,
      fill: startsInWindow / rule.limit,
    };
  });
  const { day, backoff } = state;
  return {
    atMs,
    queued: state.queued,
    inFlight: state.inFlight,
    waits: state.tally.waitStats(),
    startedPerEndpoint: state.tally.startedPerEndpoint(),
    rules,
    day: { starts: state.store.count(day.spec, atMs), limit: state.limits.perDay, resetsAtMs: day.endMs },
    rollingDay:
      state.rollingDay === undefined
        ? undefined
        : { starts: state.store.count(state.rollingDay, atMs), limit: state.rollingDay.limit },
    rateLimitReports: backoff.reports,
    pausedUntilMs: atMs < backoff.pausedUntilMs ? backoff.pausedUntilMs : undefined,
    recoveringUntilMs: atMs < backoff.recoveringUntilMs ? backoff.recoveringUntilMs : undefined,
    utilisation: Math.max(0, ...rules.map((r) => r.fill)),
    sources: state.sources,
    sourceShareWindowMs: SOURCE_SHARE_WINDOW_MS,
    unusedStarts: state.unusedStarts,
  };
}
