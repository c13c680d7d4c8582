import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { planLimits } from '../plans.js';
import { MemoryWindowStore } from './memory-window-store.js';
import { PlanScheduler } from './plan-scheduler.js';
import type { AcquireResult, StartTicket, WindowSpec, WindowStore } from './window-store.js';

const T0 = Date.UTC(2026, 0, 5, 4, 0, 0);
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A store across a network: every answer comes `delays()` ms after the call (a Redis round trip,
 * a stall). The shared state is one `MemoryWindowStore` checked at the instant the answer is
 * made, as a Lua script would; the scheduler only sees promises.
 */
class SlowStore implements WindowStore {
  readonly shared = new MemoryWindowStore();
  readonly settled: StartTicket[] = [];
  grants = 0;
  constructor(
    private readonly delays: () => number,
    readonly sendWithinMs: number,
  ) {}
  earliestStart(specs: readonly WindowSpec[], nowMs: number, extra?: ReadonlyMap<string, number>): number {
    return this.shared.earliestStart(specs, nowMs, extra);
  }
  tryAcquire(specs: readonly WindowSpec[]): Promise<AcquireResult> {
    return new Promise((resolve) =>
      setTimeout(() => {
        const result = this.shared.tryAcquire(specs, Date.now());
        if (result.acquired) this.grants++;
        resolve(result);
      }, this.delays()),
    );
  }
  settle(ticket: StartTicket, atMs: number): Promise<void> {
    this.settled.push(ticket);
    this.shared.settle(ticket, atMs);
    return Promise.resolve();
  }
  count(spec: WindowSpec, nowMs: number): number {
    return this.shared.count(spec, nowMs);
  }
  clear(): void {
    this.shared.clear();
  }
}

describe('PlanScheduler on an asynchronous store', () => {
  it('sends each job once, inside the plan, settling every grant in the store', async () => {
    const store = new SlowStore(() => 5, 1_000);
    const scheduler = new PlanScheduler(planLimits('basic'), { store });
    const spans: { startMs: number; settleMs: number }[] = [];
    const jobs = Array.from({ length: 6 }, () =>
      scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => {
        const startMs = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 200));
        spans.push({ startMs, settleMs: Date.now() });
      }),
    );
    await vi.advanceTimersByTimeAsync(30_000);
    await Promise.all(jobs);
    expect(spans).toHaveLength(6);
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]!.startMs - spans[i - 1]!.settleMs).toBeGreaterThanOrEqual(1_025);
    expect(store.grants).toBe(6);
    expect(store.settled).toHaveLength(6);
    expect(scheduler.stats().unusedStarts).toBe(0);
    await scheduler.close();
  });

  it('does not send on a grant that came later than sendWithinMs: settles it unused and asks again', async () => {
    const delays = [1_500, 5]; // the first answer stalls past the bound, the next is quick
    const store = new SlowStore(() => delays.shift() ?? 5, 1_000);
    const scheduler = new PlanScheduler(planLimits('premium'), { store });
    const sentAt: number[] = [];
    const job = scheduler.schedule(
      { endpoint: 'kline', priority: 'live' },
      async () => void sentAt.push(Date.now()),
    );
    await vi.advanceTimersByTimeAsync(5_000);
    await job;
    // Once, on the second grant (the unused first one counts in the windows like any start).
    expect(sentAt).toHaveLength(1);
    expect(sentAt[0]).toBeGreaterThanOrEqual(T0 + 1_505);
    expect(store.grants).toBe(2);
    expect(store.settled).toHaveLength(2); // the stale grant, given back at once, and the sent one
    expect(scheduler.stats().unusedStarts).toBe(1);
    await scheduler.close();
  });

  it('gives back a grant whose job was aborted or closed while the store answered', async () => {
    const store = new SlowStore(() => 300, 1_000);
    const scheduler = new PlanScheduler(planLimits('premium'), { store });
    const controller = new AbortController();
    let sent = 0;
    const aborted = scheduler.schedule(
      { endpoint: 'kline', priority: 'live', signal: controller.signal },
      async () => void sent++,
    );
    const closed = scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => void sent++);
    const outcomes = Promise.allSettled([aborted, closed]);
    await vi.advanceTimersByTimeAsync(150); // the first is waiting for the store's answer
    controller.abort(new Error('gave up'));
    const closing = scheduler.close();
    await vi.advanceTimersByTimeAsync(1_000);
    const [a, c] = await outcomes;
    expect(a).toMatchObject({ status: 'rejected', reason: new Error('gave up') });
    expect(c).toMatchObject({ status: 'rejected', reason: { code: 'QF_CLOSED' } });
    await closing;
    expect(sent).toBe(0);
    // The first job's grant came after its abort; every grant went back to the store unused.
    expect(store.grants).toBeGreaterThanOrEqual(1);
    expect(store.settled).toHaveLength(store.grants);
  });
});
