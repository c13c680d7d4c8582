import type { EndpointKind, PlanLimits, WindowRule } from '../../plans.js';
import { utcToZoned, zonedToUtcMs } from '../../internal/zoned-time.js';
import { IN_FLIGHT_BOUND_MS } from '../in-flight-bound.js';
import type { BucketSpec, RollingWindowSpec, SlidingWindowSpec, WindowSpec } from '../window-store.js';

/** The key under which the recovery pacing after a rate-limit report is logged. */
export const PACE_KEY = 'pace';

/** How the daily total is read: a reset at midnight, any 24 hours, or both at once. */
export const DAILY_WINDOWS = ['calendar', 'rolling', 'both'] as const;
export type DailyWindow = (typeof DAILY_WINDOWS)[number];

const DAY_MS = 86_400_000;
/**
 * Counter width of the rolling day: a start counts up to a minute longer than 24 hours (at most
 * 0.07 % of the day), and a store keeps at most 1,441 counters for it.
 */
export const ROLLING_DAY_SLOT_MS = 60_000;

/**
 * Turns a plan's limits into the window specs one request of an endpoint must satisfy: every
 * sliding rule that applies (window widened by the margin), and the daily total: the calendar day
 * of the start and, in the last `arrivalSpanMs` before midnight, the next day too (the request may
 * arrive after midnight); and/or the rolling 24 hours before it (`dailyWindow`). The one source
 * of the plan's windows: `PlanScheduler` checks them in a `WindowStore`, the cluster's shared
 * quota in Redis.
 */
export class PlanWindows {
  private readonly byEndpoint = new Map<EndpointKind, SlidingWindowSpec[]>();
  /** The two most recently used days (today, and tomorrow near midnight). */
  private days: CalendarDay[] = [];

  constructor(
    readonly limits: PlanLimits,
    readonly marginMs: number,
    readonly timeZone: string,
    /** Fraction of a rule's even spacing kept between two of its starts (0 = whole bursts). */
    readonly smoothing = 0,
    /** Whether a request counts until it settled (arrival bound) or from its start. */
    readonly countFrom: 'settle' | 'start' = 'settle',
    /** Which reading of the daily total applies (the spec does not say). */
    readonly dailyWindow: DailyWindow = 'both',
    /**
     * How long after its start a request may still arrive, in ms: a start this close to midnight
     * counts in the next day too. Defaults to the margin.
     */
    readonly arrivalSpanMs: number = marginMs,
  ) {
    // Counted from the start, so widened by the in-flight bound: a request counts until it can
    // have arrived, as the settle-anchored rules do (the rolling day has too many starts to keep
    // each one's settle time).
    this.rollingDay = {
      kind: 'rolling',
      key: 'rolling-day',
      windowMs: DAY_MS + marginMs + IN_FLIGHT_BOUND_MS,
      limit: limits.perDay,
      slotMs: ROLLING_DAY_SLOT_MS,
    };
  }

  /** The rolling 24 hours of the daily total (enforced unless `dailyWindow` is `'calendar'`). */
  readonly rollingDay: RollingWindowSpec;

  /** The sliding rules that count a request of `endpoint`. */
  rulesFor(endpoint: EndpointKind): readonly WindowRule[] {
    return this.limits.rules.filter((rule) => rule.scope === 'all' || rule.scope === endpoint);
  }

  /** The specs of one start of `endpoint` at `nowMs`; `paceMs` adds recovery pacing. */
  specsFor(endpoint: EndpointKind, nowMs: number, paceMs?: number): WindowSpec[] {
    let sliding = this.byEndpoint.get(endpoint);
    if (sliding === undefined) {
      sliding = [];
      for (const rule of this.rulesFor(endpoint)) {
        const windowMs = rule.windowMs + this.marginMs;
        // The service counts arrivals: a request counts until it settled (see SlidingWindowSpec).
        sliding.push({
          kind: 'sliding',
          key: `rule:${rule.id}`,
          windowMs,
          limit: rule.limit,
          anchor: this.countFrom,
        });
        // Spread a rule's burst: starts that pile up in one instant pile up on the wire too, and
        // the last of them can arrive later than the margin allows (spec: provider-facts, Limits).
        if (this.smoothing > 0 && rule.limit > 1) {
          const spacingMs = Math.ceil((this.smoothing * windowMs) / rule.limit);
          sliding.push({ kind: 'sliding', key: `rule:${rule.id}:spacing`, windowMs: spacingMs, limit: 1 });
        }
      }
      this.byEndpoint.set(endpoint, sliding);
    }
    const specs: WindowSpec[] = [...sliding, ...this.dailySpecs(nowMs)];
    if (paceMs !== undefined) specs.push({ kind: 'sliding', key: PACE_KEY, windowMs: paceMs, limit: 1 });
    return specs;
  }

  /**
   * The daily total's specs of a start at `nowMs`: its calendar day (and the next one near
   * midnight) and/or the rolling 24 hours, as `dailyWindow` reads the total.
   */
  dailySpecs(nowMs: number): WindowSpec[] {
    const specs: WindowSpec[] = [];
    if (this.dailyWindow !== 'rolling') {
      const day = this.dayOf(nowMs).spec;
      const arrivalDay = this.dayOf(nowMs + this.arrivalSpanMs).spec;
      specs.push(day);
      if (arrivalDay.key !== day.key) specs.push(arrivalDay);
    }
    if (this.dailyWindow !== 'calendar') specs.push(this.rollingDay);
    return specs;
  }

  /** The spacing of evenly paced starts at the sustained rate of `endpoint` (margin included). */
  intervalMs(endpoint: EndpointKind): number {
    let interval = 0;
    for (const rule of this.rulesFor(endpoint)) {
      interval = Math.max(interval, (rule.windowMs + this.marginMs) / rule.limit);
    }
    return interval;
  }

  /** The calendar day (reset time zone) that contains `ms`. */
  dayOf(ms: number): CalendarDay {
    for (const day of this.days) if (ms >= day.startMs && ms < day.endMs) return day;
    const z = utcToZoned(ms, this.timeZone);
    const startMs = zonedToUtcMs(this.timeZone, z.year, z.month, z.day);
    // Date.UTC inside zonedToUtcMs normalises day 32 into the next month.
    const endMs = zonedToUtcMs(this.timeZone, z.year, z.month, z.day + 1);
    const spec: BucketSpec = {
      kind: 'bucket',
      key: `day:${startMs}`,
      limit: this.limits.perDay,
      endsAtMs: endMs,
    };
    const day = { startMs, endMs, spec };
    this.days = [day, ...this.days.slice(0, 1)];
    return day;
  }
}

/** One calendar day of the reset time zone and its bucket. */
export interface CalendarDay {
  readonly startMs: number;
  readonly endMs: number;
  readonly spec: BucketSpec;
}
