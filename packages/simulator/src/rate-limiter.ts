import type { SimEndpoint, SimPlanLimits, SimWindowRule } from './sim-plans.js';
import { toLocal } from './internal/zoned-time.js';

/** The verdict on one request arrival. */
export interface RateDecision {
  readonly allowed: boolean;
  /** Id of the first rule that refused it (`combined`, `per-minute`, `kline-rate`, `batch-kline-interval`, `suspension-interval`, `per-day`, …). */
  readonly rule: string | undefined;
}

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Whether refused arrivals count toward the windows too (stricter). @defaultValue true */
  readonly countRefused?: boolean;
  /** Zone whose midnight resets the daily count. @defaultValue 'UTC' */
  readonly dayTimeZone?: string;
}

const DEFAULTS = { countRefused: true, dayTimeZone: 'Asia/Shanghai' } as const;

/**
 * Enforces one token's plan limits on request ARRIVAL times: every sliding-window rule counts the
 * arrivals in (t - windowMs, t] (so "one every 10 s" admits t and t + 10 000 ms), and the daily
 * total resets at midnight of `dayTimeZone`. Time is passed in, so tests use a virtual clock.
 */
export class RateLimiter {
  readonly limits: SimPlanLimits;
  readonly #countRefused: boolean;
  readonly #dayTimeZone: string;
  readonly #arrivals = new Map<string, number[]>();
  #day = Number.NaN;
  #dayCount = 0;

  constructor(limits: SimPlanLimits, options: RateLimiterOptions = {}) {
    this.limits = limits;
    this.#countRefused = options.countRefused ?? DEFAULTS.countRefused;
    this.#dayTimeZone = options.dayTimeZone ?? DEFAULTS.dayTimeZone;
    toLocal(0, this.#dayTimeZone); // throws RangeError on an unknown zone, up front
    for (const rule of limits.rules) this.#arrivals.set(rule.id, []);
  }

  /** Decides on an arrival of `endpoint` at `nowMs` and records it (refused ones only with `countRefused`). */
  arrive(endpoint: SimEndpoint, nowMs: number): RateDecision {
    const applicable = this.limits.rules.filter((r) => r.scope === 'all' || r.scope === endpoint);
    let refusedBy: string | undefined;
    for (const rule of applicable) {
      if (this.#inWindow(rule, nowMs) >= rule.limit) {
        refusedBy = rule.id;
        break;
      }
    }
    const day = toLocal(nowMs, this.#dayTimeZone).dayNumber;
    if (day !== this.#day) {
      this.#day = day;
      this.#dayCount = 0;
    }
    if (refusedBy === undefined && this.#dayCount >= this.limits.perDay) refusedBy = 'per-day';
    if (refusedBy === undefined || this.#countRefused) {
      for (const rule of applicable) this.#arrivals.get(rule.id)!.push(nowMs);
      this.#dayCount++;
    }
    return { allowed: refusedBy === undefined, rule: refusedBy };
  }

  /** Requests counted today (in `dayTimeZone`). */
  get dayCount(): number {
    return this.#dayCount;
  }

  #inWindow(rule: SimWindowRule, nowMs: number): number {
    const list = this.#arrivals.get(rule.id)!;
    const cutoff = nowMs - rule.windowMs;
    let drop = 0;
    while (drop < list.length && list[drop]! <= cutoff) drop++;
    if (drop > 0) list.splice(0, drop);
    // Arrivals are recorded in order; a clock that steps back still counts them (conservative).
    return list.length;
  }
}
