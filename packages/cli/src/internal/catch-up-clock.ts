import { systemClock, type Clock } from '@quoteflow/core';

/** Options of {@link catchUpClock}. */
export interface CatchUpClockOptions {
  /** Clock milliseconds per base millisecond until it has caught up (30 = thirty times real speed). */
  readonly speed: number;
  /** How far behind the base clock it starts, in ms. */
  readonly behindMs: number;
  /** @defaultValue core's `systemClock` */
  readonly base?: Clock;
}

/**
 * A clock that starts `behindMs` behind `base` and runs `speed` times faster until it has caught
 * up with it, then runs with it: market time that passes quickly (the demo's bars close while one
 * watches) and never runs ahead of the real time, so nothing it makes is dated in the future.
 * Timers fire when this clock reaches their time, on either side of the catch-up.
 */
export function catchUpClock(options: CatchUpClockOptions): Clock {
  const { speed, behindMs } = options;
  const base = options.base ?? systemClock;
  const baseStart = base.now();
  const start = baseStart - behindMs;
  // The base instant (and this clock's) at which the fast clock meets the base clock.
  const meetMs = behindMs <= 0 ? baseStart : speed > 1 ? baseStart + behindMs / (speed - 1) : Infinity;
  const now = (): number => {
    const b = base.now();
    return Math.floor(b >= meetMs ? b : start + (b - baseStart) * speed);
  };
  return {
    now,
    setTimeout: (callback, delayMs) => {
      const target = now() + Math.max(0, delayMs);
      const atBaseMs = target >= meetMs ? target : baseStart + (target - start) / speed;
      return base.setTimeout(callback, Math.max(0, atBaseMs - base.now()));
    },
    clearTimeout: (handle) => base.clearTimeout(handle),
  };
}
