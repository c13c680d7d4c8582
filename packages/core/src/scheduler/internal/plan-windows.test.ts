import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../clock.js';
import { zonedToUtcMs } from '../../internal/zoned-time.js';
import { planLimits } from '../../plans.js';
import { IN_FLIGHT_BOUND_MS } from '../in-flight-bound.js';
import { MemoryWindowStore } from '../memory-window-store.js';
import { SqliteWindowStore } from '../sqlite-window-store.js';
import { PlanWindows, type DailyWindow } from './plan-windows.js';

const DAY_MS = 86_400_000;
const MARGIN_MS = 25;
/** The rolling day's window: 24 h, the margin, and the in-flight bound (it counts from the start). */
const ROLLING_MS = DAY_MS + MARGIN_MS + IN_FLIGHT_BOUND_MS;
const MIDNIGHT = zonedToUtcMs('Asia/Shanghai', 2026, 1, 6);
/** Two minutes before midnight in Shanghai, on a minute (the rolling day counts per minute). */
const START = MIDNIGHT - 120_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qf-plan-windows-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const stores: Record<string, (clock: ManualClock) => MemoryWindowStore | SqliteWindowStore> = {
  memory: () => new MemoryWindowStore(),
  sqlite: (clock) =>
    new SqliteWindowStore({
      token: 'plan-windows-test',
      stateDir: dir,
      time: { clockMs: () => clock.now(), monotonicMs: () => clock.now(), bootId: () => 'boot' },
    }),
};

/**
 * Four /kline starts on basic with two a day, each as early as the windows allow, on a ManualClock
 * that moves to each allowed instant (requests answered at once); the instants, from START.
 */
async function fourStarts(
  dailyWindow: DailyWindow,
  makeStore: (clock: ManualClock) => MemoryWindowStore | SqliteWindowStore,
) {
  const clock = new ManualClock(START);
  const store = makeStore(clock);
  store.clear(); // the database file outlives the store: each run starts empty
  const windows = new PlanWindows(
    { ...planLimits('basic'), perDay: 2 },
    MARGIN_MS,
    'Asia/Shanghai',
    0,
    'settle',
    dailyWindow,
  );
  const starts: number[] = [];
  while (starts.length < 4) {
    const specs = windows.specsFor('kline', clock.now());
    const at = store.earliestStart(specs, clock.now());
    await clock.advanceTo(at);
    const got = store.tryAcquire(windows.specsFor('kline', clock.now()), clock.now());
    if (!got.acquired) continue;
    starts.push(clock.now() - START);
    store.settle(got.ticket, clock.now());
  }
  (store as Partial<SqliteWindowStore>).close?.();
  return starts;
}

describe.each(Object.entries(stores))('PlanWindows daily total on the %s store', (_name, makeStore) => {
  it("'calendar' opens again at the zone's midnight", async () => {
    expect(await fourStarts('calendar', makeStore)).toEqual([0, 1_025, 120_000, 121_025]);
  });

  it("'rolling' holds past midnight until the first minute left the last 24 hours", async () => {
    // Both starts count at the end of their minute (START is on a minute: the first at START).
    expect(await fourStarts('rolling', makeStore)).toEqual([0, 1_025, ROLLING_MS, ROLLING_MS + 60_000]);
  });

  it("'both' holds across midnight (rolling) and is never looser than either reading", async () => {
    const both = await fourStarts('both', makeStore);
    expect(both).toEqual([0, 1_025, ROLLING_MS, ROLLING_MS + 60_000]);
    const calendar = await fourStarts('calendar', makeStore);
    both.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(calendar[i]!));
  });
});

describe('PlanWindows', () => {
  it("counts a start in the last margin before midnight in the next day too under 'both'", () => {
    const windows = new PlanWindows(planLimits('free'), MARGIN_MS, 'Asia/Shanghai');
    const keys = windows.specsFor('kline', MIDNIGHT - 10).map((s) => s.key);
    expect(keys).toContain(`day:${MIDNIGHT - DAY_MS}`);
    expect(keys).toContain(`day:${MIDNIGHT}`);
    expect(keys).toContain('rolling-day');
  });
});
