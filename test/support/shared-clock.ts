/**
 * One accelerated clock for a test and the processes it starts: the test's simulator and its
 * child processes each build core's `acceleratedClock` from the same spec, passed through the
 * environment (`QF_TEST_CLOCK`), so every process reads the same instant at the same moment:
 * `startMs + (Date.now() - anchorMs) * speed`. For multi-process tests whose subject is market
 * time (bars closing), not the wall clock (leases, Redis's quota), which stays real.
 *
 * @example
 * ```ts
 * const shared = newSharedClock({ speed: 4 });
 * const sim = await startSimulator({ clock: shared.clock });
 * spawn(process.execPath, [worker], { env: { ...process.env, ...shared.env } });
 * // in the worker: const clock = clockFromEnv(); new QuoteflowClient({ ..., clock })
 * ```
 */
import { acceleratedClock, type Clock } from '@quoteflow/core';

/** The environment variable that carries a {@link SharedClockSpec} as JSON. */
export const SHARED_CLOCK_ENV = 'QF_TEST_CLOCK';

export interface SharedClockSpec {
  /** Clock ms per real ms. */
  readonly speed: number;
  /** The clock's time at `anchorMs`. */
  readonly startMs: number;
  /** `Date.now()` when the clock read `startMs`. */
  readonly anchorMs: number;
}

/** The clock of `spec` in this process. */
export function sharedClock(spec: SharedClockSpec): Clock {
  return acceleratedClock({
    speed: spec.speed,
    startMs: spec.startMs + (Date.now() - spec.anchorMs) * spec.speed,
  });
}

/** A new shared clock at `speed` from `startMs` (now by default): its clock here, and its env for children. */
export function newSharedClock(options: { readonly speed: number; readonly startMs?: number }): {
  readonly spec: SharedClockSpec;
  readonly clock: Clock;
  readonly env: Record<string, string>;
} {
  const anchorMs = Date.now();
  const spec = { speed: options.speed, startMs: options.startMs ?? anchorMs, anchorMs };
  return { spec, clock: sharedClock(spec), env: { [SHARED_CLOCK_ENV]: JSON.stringify(spec) } };
}

/** The shared clock a parent passed in `QF_TEST_CLOCK`, or undefined (then the system clock). */
export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock | undefined {
  const raw = env[SHARED_CLOCK_ENV];
  return raw === undefined || raw === '' ? undefined : sharedClock(JSON.parse(raw) as SharedClockSpec);
}
