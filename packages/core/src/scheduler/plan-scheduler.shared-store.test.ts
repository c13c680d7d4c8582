import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { planLimits } from '../plans.js';
import { PlanScheduler } from './plan-scheduler.js';
import { SqliteWindowStore } from './sqlite-window-store.js';

const T0 = Date.UTC(2026, 0, 5, 4, 0, 0);
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qf-shared-store-'));
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('PlanScheduler on a store shared with another process', () => {
  it('waits when the other process took the start, never sends over the plan, and finishes every job', async () => {
    // Two "processes": one database file, each its own connection and scheduler, one machine clock.
    const time = { clockMs: () => Date.now(), monotonicMs: () => Date.now(), bootId: () => 'boot' };
    const stores = [0, 1].map(
      () => new SqliteWindowStore({ token: 'shared-store-test', stateDir: dir, time }),
    );
    const schedulers = stores.map((store) => new PlanScheduler(planLimits('basic'), { store }));
    const spans: { startMs: number; settleMs: number }[] = [];
    const jobs = schedulers.flatMap((scheduler, i) =>
      Array.from({ length: 6 }, (_, j) =>
        scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => {
          const startMs = Date.now();
          // Answers take 100-400 ms: the other process's requests are in flight when one looks.
          await new Promise((resolve) => setTimeout(resolve, 100 + ((i * 7 + j * 3) % 4) * 100));
          spans.push({ startMs, settleMs: Date.now() });
        }),
      ),
    );
    await vi.advanceTimersByTimeAsync(60_000);
    await Promise.all(jobs);
    expect(spans).toHaveLength(12);
    spans.sort((a, b) => a.startMs - b.startMs);
    // Basic: one request per second, counted until its answer came back (plus the 25 ms margin).
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]!.startMs - spans[i - 1]!.settleMs).toBeGreaterThanOrEqual(1_025);
    await Promise.all(schedulers.map((s) => s.close()));
    for (const store of stores) store.close();
  });
});
