import {
  PlanWindows,
  type BucketSpec,
  type DailyWindow,
  type EndpointKind,
  type PlanLimits,
  type RollingWindowSpec,
  type SlidingWindowSpec,
} from '@quoteflow/core';

/** The windows one start of an endpoint must fit, with their Redis keys. */
export interface SharedSpecs {
  readonly sliding: readonly SlidingWindowSpec[];
  readonly buckets: readonly BucketSpec[];
  readonly rolling: readonly RollingWindowSpec[];
}

/**
 * The plan's windows as the shared quota checks them in Redis: core's {@link PlanWindows} (the
 * one source of the rules, the calendar day and the rolling 24 hours), every key prefixed with the
 * token's namespace. Every sliding rule counts a request until it settled (its arrival), so a
 * start this close to midnight counts in the next day too (`arrivalSpanMs`).
 */
export class SharedWindows {
  private readonly windows: PlanWindows;
  private readonly slidingByEndpoint = new Map<EndpointKind, SlidingWindowSpec[]>();
  /** The longest sliding window (margin included): how long a lost start can still matter to one. */
  readonly longestSlidingMs: number;

  constructor(
    private readonly namespace: string,
    limits: PlanLimits,
    marginMs: number,
    timeZone: string,
    dailyWindow: DailyWindow,
    arrivalSpanMs: number,
  ) {
    this.windows = new PlanWindows(limits, marginMs, timeZone, 0, 'settle', dailyWindow, arrivalSpanMs);
    this.longestSlidingMs = Math.max(...limits.rules.map((rule) => rule.windowMs + marginMs));
  }

  /** The specs of one start of `endpoint` at `nowMs`. */
  at(endpoint: EndpointKind, nowMs: number): SharedSpecs {
    const sliding: SlidingWindowSpec[] = [];
    const buckets: BucketSpec[] = [];
    const rolling: RollingWindowSpec[] = [];
    for (const spec of this.windows.specsFor(endpoint, nowMs)) {
      const key = `${this.namespace}:quota:${spec.key}`;
      if (spec.kind === 'sliding') sliding.push({ ...spec, key });
      else if (spec.kind === 'bucket') buckets.push({ ...spec, key });
      else rolling.push({ ...spec, key });
    }
    return { sliding, buckets, rolling };
  }

  /** The sliding rules that count a request of `endpoint` (they do not change with time). */
  sliding(endpoint: EndpointKind): readonly SlidingWindowSpec[] {
    let specs = this.slidingByEndpoint.get(endpoint);
    if (specs === undefined) {
      specs = [...this.at(endpoint, Date.now()).sliding];
      this.slidingByEndpoint.set(endpoint, specs);
    }
    return specs;
  }
}
