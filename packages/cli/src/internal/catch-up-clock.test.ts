import { describe, expect, it } from 'vitest';
import { ManualClock } from '@quoteflow/core';
import { catchUpClock } from './catch-up-clock.js';

const T0 = Date.UTC(2026, 0, 5, 14, 30);
/** 580 s behind at 30x: it meets the base clock after 580 / 29 = 20 s. */
const BEHIND_MS = 580_000;

describe('catchUpClock', () => {
  it('starts behind, runs fast until it meets the base clock, then runs with it, never ahead', async () => {
    const base = new ManualClock(T0);
    const clock = catchUpClock({ speed: 30, behindMs: BEHIND_MS, base });
    expect(clock.now()).toBe(T0 - BEHIND_MS);
    await base.advance(10_000);
    expect(clock.now()).toBe(T0 - BEHIND_MS + 300_000);
    await base.advance(9_999);
    expect(clock.now()).toBe(T0 + 19_970); // 30 ms behind, 1 ms of base time before meeting
    await base.advance(1);
    expect(clock.now()).toBe(T0 + 20_000);
    for (const step of [1, 1_000, 60_000]) {
      await base.advance(step);
      expect(clock.now()).toBe(base.now());
    }
  });

  it('fires a timer when it reaches the timer’s time, before and across the catch-up', async () => {
    const base = new ManualClock(T0);
    const clock = catchUpClock({ speed: 30, behindMs: BEHIND_MS, base });
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 60_000); // a market minute: 2 s of base time
    clock.setTimeout(() => fired.push(clock.now()), BEHIND_MS + 60_000); // a minute past the meeting
    await base.advance(1_999);
    expect(fired).toEqual([]);
    await base.advance(1);
    expect(fired).toEqual([T0 - BEHIND_MS + 60_000]);
    await base.advance(57_999);
    expect(fired).toHaveLength(1);
    await base.advance(1);
    expect(fired[1]).toBe(T0 + 60_000);
  });
});
