/**
 * The time source and timers a {@link PlanScheduler} uses. Inject one to run the scheduler on a
 * virtual clock; the default reads the globals at every call, so `vi.useFakeTimers()` also works.
 * Bottleneck's own dispatch always uses the global timers; the scheduler only relies on it to run
 * a job soon, never for timing, so any clock works.
 *
 * @example
 * ```ts
 * // A clock 5 s ahead of the process clock (e.g. to match the service's), same timers:
 * const clock: SchedulerClock = { ...systemClock, now: () => Date.now() + 5_000 };
 * const scheduler = new PlanScheduler(planLimits('basic'), { clock });
 * ```
 */
export interface SchedulerClock {
  /** Epoch milliseconds (the daily reset needs calendar time, so not a monotonic origin). */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The process clock: `Date.now()` and the global timers, looked up at call time so fake timers that
 * replace the globals after import still take effect.
 */
export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
