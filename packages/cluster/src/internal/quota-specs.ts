import { utcToZoned, zonedToUtcMs, type EndpointKind, type PlanLimits } from '@quoteflow/core';

/** One sliding rule as the shared quota checks it (window already widened by the margin). */
export interface SlidingKeySpec {
  readonly key: string;
  readonly windowMs: number;
  readonly limit: number;
}

/** One calendar day of the reset time zone. */
export interface DayKeySpec {
  readonly key: string;
  readonly limit: number;
  readonly endsAtMs: number;
}

/**
 * The shared-quota version of core's plan windows: for one endpoint, every sliding rule that
 * applies (same rule ids, so the same keys as `PlanScheduler` logs locally), plus the day of the
 * start and, in the last `arrivalSpanMs` before midnight, the next day too (a request may arrive
 * up to its in-flight bound after its start, so after midnight). Mirrors `PlanWindows` in core,
 * which is internal there.
 */
export class QuotaSpecs {
  private readonly byEndpoint = new Map<EndpointKind, SlidingKeySpec[]>();
  private days: { startMs: number; endMs: number; spec: DayKeySpec }[] = [];
  /** The longest sliding window (margin included): how long old starts matter. */
  readonly longestWindowMs: number;

  constructor(
    private readonly namespace: string,
    private readonly limits: PlanLimits,
    private readonly marginMs: number,
    private readonly timeZone: string,
    /** How long after its start a request can arrive (the longest in-flight bound), in ms. */
    private readonly arrivalSpanMs: number = marginMs,
  ) {
    this.longestWindowMs = Math.max(...limits.rules.map((rule) => rule.windowMs + marginMs));
  }

  sliding(endpoint: EndpointKind): readonly SlidingKeySpec[] {
    let specs = this.byEndpoint.get(endpoint);
    if (specs === undefined) {
      specs = this.limits.rules
        .filter((rule) => rule.scope === 'all' || rule.scope === endpoint)
        .map((rule) => ({
          key: `${this.namespace}:quota:rule:${rule.id}`,
          windowMs: rule.windowMs + this.marginMs,
          limit: rule.limit,
        }));
      this.byEndpoint.set(endpoint, specs);
    }
    return specs;
  }

  /** The day buckets a start at `nowMs` counts in. */
  bucketsAt(nowMs: number): DayKeySpec[] {
    const today = this.dayOf(nowMs);
    const arrival = this.dayOf(nowMs + this.arrivalSpanMs);
    return arrival.key === today.key ? [today] : [today, arrival];
  }

  dayOf(ms: number): DayKeySpec {
    for (const day of this.days) if (ms >= day.startMs && ms < day.endMs) return day.spec;
    const z = utcToZoned(ms, this.timeZone);
    const startMs = zonedToUtcMs(this.timeZone, z.year, z.month, z.day);
    const endMs = zonedToUtcMs(this.timeZone, z.year, z.month, z.day + 1);
    const spec = {
      key: `${this.namespace}:quota:day:${startMs}`,
      limit: this.limits.perDay,
      endsAtMs: endMs,
    };
    this.days = [{ startMs, endMs, spec }, ...this.days.slice(0, 1)];
    return spec;
  }
}
