import {
  acceleratedClock,
  planLimits,
  sharedSchedulerFor,
  type Clock,
  type Plan,
  type PlanLimitOverrides,
  type RequestScheduler,
} from '@quoteflow/core';
import { SqliteWindowStore, type MachineTime } from '@quoteflow/core/internal';
import { UsageError } from './usage-error.js';

/**
 * **Test-only seam**: the environment variable that puts a command on an accelerated clock shared
 * with the process that started it (`test/support/shared-clock.ts`: `{"speed", "startMs",
 * "anchorMs"}`, the clock reading `startMs + (Date.now() - anchorMs) * speed`). Benchmarks and
 * tests that run the real CLI against a simulator at many times real speed (`pnpm bench soak`)
 * set it; users never do, and it is not in the reference.
 */
export const TEST_CLOCK_ENV = 'QF_TEST_CLOCK';

/** The shared clock `QF_TEST_CLOCK` names, or undefined (the system clock) when it is not set. */
export function testClockOf(env: Readonly<Record<string, string | undefined>>): Clock | undefined {
  const raw = env[TEST_CLOCK_ENV];
  if (raw === undefined || raw.trim() === '') return undefined;
  let spec: { speed?: unknown; startMs?: unknown; anchorMs?: unknown };
  try {
    spec = JSON.parse(raw) as typeof spec;
  } catch {
    throw new UsageError(`${TEST_CLOCK_ENV} must be JSON {"speed","startMs","anchorMs"}, got ${raw}`);
  }
  const { speed, startMs, anchorMs } = spec;
  if (typeof speed !== 'number' || typeof startMs !== 'number' || typeof anchorMs !== 'number')
    throw new UsageError(
      `${TEST_CLOCK_ENV} must be JSON {"speed","startMs","anchorMs"} of numbers, got ${raw}`,
    );
  return acceleratedClock({ speed, startMs: startMs + (Date.now() - anchorMs) * speed });
}

/**
 * The token's machine-wide quota (the state directory's SQLite file, as on the system clock) kept
 * on the test clock: every command of one test run reads the same instant from it, so its
 * windows line up across the processes of the run, the way machine time lines them up otherwise.
 */
export function testClockScheduler(
  clock: Clock,
  service: { readonly token: string; readonly plan: Plan; readonly limits: PlanLimitOverrides },
): RequestScheduler {
  const time: MachineTime = {
    clockMs: () => clock.now(),
    monotonicMs: () => clock.now(),
    bootId: () => TEST_CLOCK_ENV,
  };
  return sharedSchedulerFor(service.token, planLimits(service.plan, service.limits), {
    clock,
    store: new SqliteWindowStore({ token: service.token, time }),
  });
}
