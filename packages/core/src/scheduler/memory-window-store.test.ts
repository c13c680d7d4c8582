import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryWindowStore } from './memory-window-store.js';
import type { SlidingWindowSpec } from './window-store.js';

/** Brute force: the earliest t >= now with fewer than `limit` of `starts` in (t - windowMs, t]. */
function bruteEarliest(starts: readonly number[], spec: SlidingWindowSpec, now: number): number {
  for (let t = now; ; t++) {
    if (starts.filter((s) => s > t - spec.windowMs && s <= t).length < spec.limit) return t;
  }
}

describe('MemoryWindowStore', () => {
  it('answers the earliest allowed start exactly, as a brute-force scan of the log does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 40 }),
        (limit, windowMs, gaps) => {
          const store = new MemoryWindowStore();
          const spec: SlidingWindowSpec = { kind: 'sliding', key: 'k', windowMs, limit };
          const starts: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            const expected = bruteEarliest(starts, spec, now);
            expect(store.earliestStart([spec], now)).toBe(expected);
            const result = store.tryAcquire([spec], now);
            expect(result.acquired).toBe(expected === now);
            if (result.acquired) starts.push(now);
            else expect(result.retryAtMs).toBe(expected);
          }
        },
      ),
    );
  });

  it('answers "what if one more start happened now" without recording it', () => {
    const store = new MemoryWindowStore();
    const spec: SlidingWindowSpec = { kind: 'sliding', key: 'k', windowMs: 100, limit: 2 };
    store.tryAcquire([spec], 0);
    expect(store.earliestStart([spec], 10)).toBe(10);
    expect(store.earliestStart([spec], 10, new Map([['k', 1]]))).toBe(100);
    expect(store.earliestStart([spec], 10, new Map([['other', 1]]))).toBe(10);
    expect(store.earliestStart([spec], 10, new Map([['k', 5]]))).toBe(110);
    expect(store.count(spec, 10)).toBe(1);
  });

  it('closes a full calendar bucket until it ends, and counts it per key', () => {
    const store = new MemoryWindowStore();
    const day = { kind: 'bucket' as const, key: 'day:0', limit: 2, endsAtMs: 1_000 };
    expect(store.tryAcquire([day], 0).acquired).toBe(true);
    expect(store.tryAcquire([day], 1).acquired).toBe(true);
    expect(store.tryAcquire([day], 2)).toEqual({ acquired: false, retryAtMs: 1_000 });
    expect(store.count(day, 2)).toBe(2);
    expect(store.count(day, 1_000)).toBe(0);
  });

  it('holds a rule with a huge limit without allocating for the limit', () => {
    const store = new MemoryWindowStore();
    const spec: SlidingWindowSpec = { kind: 'sliding', key: 'k', windowMs: 1_000, limit: 1e12 };
    for (let t = 0; t < 100; t++) expect(store.tryAcquire([spec], t).acquired).toBe(true);
    expect(store.count(spec, 99)).toBe(100);
  });
});
