import {
  type BucketSpec,
  type DailyWindow,
  type EndpointKind,
  type PlanLimits,
  type RollingWindowSpec,
  type SlidingWindowSpec,
  type WindowSpec,
} from '@quoteflow/core';
import { PlanWindows } from '@quoteflow/core/internal';

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
    return this.shared(this.windows.specsFor(endpoint, nowMs));
  }

  /** `specs` (a scheduler's, for one start) under their Redis keys, by kind. */
  shared(specs: readonly WindowSpec[]): SharedSpecs {
    const sliding: SlidingWindowSpec[] = [];
    const buckets: BucketSpec[] = [];
    const rolling: RollingWindowSpec[] = [];
    for (const spec of specs) {
      const key = `${this.namespace}:quota:${spec.key}`;
      if (spec.kind === 'sliding') sliding.push({ ...spec, key });
      else if (spec.kind === 'bucket') buckets.push({ ...spec, key });
      else rolling.push({ ...spec, key });
    }
    return { sliding, buckets, rolling };
  }
}
