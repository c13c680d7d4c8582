import { timer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { acceleratedClock, clockScheduler, ManualClock, sleepOn, systemClock } from './clock.js';
import { InvalidOptionError } from './errors.js';

const T0 = Date.UTC(2026, 0, 5, 14, 30);

describe('ManualClock', () => {
  it('fires timers in time order, ties in creation order, with now() at each due time', async () => {
    const clock = new ManualClock(T0);
    const fired: [string, number][] = [];
    clock.setTimeout(() => fired.push(['c', clock.now()]), 300);
    clock.setTimeout(() => fired.push(['a', clock.now()]), 100);
    clock.setTimeout(() => fired.push(['b1', clock.now()]), 200);
    clock.setTimeout(() => fired.push(['b2', clock.now()]), 200);
    await clock.advance(250);
    expect(fired).toEqual([
      ['a', T0 + 100],
      ['b1', T0 + 200],
      ['b2', T0 + 200],
    ]);
    expect(clock.now()).toBe(T0 + 250);
    await clock.advance(50);
    expect(fired.at(-1)).toEqual(['c', T0 + 300]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('fires nothing before it is advanced, and a timer set by a timer in the same advance', async () => {
    const clock = new ManualClock(T0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 10);
    }, 0);
    expect(fired).toEqual([]);
    await clock.advance(10);
    expect(fired).toEqual([T0, T0 + 10]);
  });

  it('cancels a timer with clearTimeout', async () => {
    const clock = new ManualClock(T0);
    const fired: string[] = [];
    const a = clock.setTimeout(() => fired.push('a'), 100);
    clock.setTimeout(() => fired.push('b'), 100);
    clock.clearTimeout(a);
    clock.clearTimeout(a); // twice is harmless
    await clock.advance(1_000);
    expect(fired).toEqual(['b']);
  });

  it('never moves backwards and refuses a start that is not a number', async () => {
    const clock = new ManualClock(T0);
    await clock.advanceTo(T0 - 1_000);
    expect(clock.now()).toBe(T0);
    expect(() => new ManualClock(Number.NaN)).toThrow(InvalidOptionError);
  });
});

describe('acceleratedClock', () => {
  it('runs speed times faster than its base, from startMs', async () => {
    const base = new ManualClock(1_000);
    const clock = acceleratedClock({ speed: 30, base, startMs: T0 });
    expect(clock.now()).toBe(T0);
    await base.advance(1_000);
    expect(clock.now()).toBe(T0 + 30_000);
  });

  it('starts at the base time when no startMs is given', async () => {
    const base = new ManualClock(T0);
    const clock = acceleratedClock({ speed: 2, base });
    await base.advance(500);
    expect(clock.now()).toBe(T0 + 1_000);
  });

  it('fires a timer after delay / speed of base time', async () => {
    const base = new ManualClock(0);
    const clock = acceleratedClock({ speed: 10, base, startMs: T0 });
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 10_000);
    const cancelled = clock.setTimeout(() => fired.push(-1), 5_000);
    clock.clearTimeout(cancelled);
    await base.advance(999);
    expect(fired).toEqual([]);
    await base.advance(1);
    expect(fired).toEqual([T0 + 10_000]);
  });

  it('refuses a speed that is not a positive number', () => {
    expect(() => acceleratedClock({ speed: 0 })).toThrow(/"speed" must be a positive number/);
    expect(() => acceleratedClock({ speed: Number.NaN })).toThrow(InvalidOptionError);
  });
});

describe('sleepOn', () => {
  it('resolves after ms of the clock time', async () => {
    const clock = new ManualClock(T0);
    let done = false;
    const p = sleepOn(clock, 500).then(() => (done = true));
    await clock.advance(499);
    expect(done).toBe(false);
    await clock.advance(1);
    await p;
    expect(done).toBe(true);
  });

  it('rejects with the reason when the signal aborts, and clears its timer', async () => {
    const clock = new ManualClock(T0);
    const controller = new AbortController();
    const p = sleepOn(clock, 500, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects at once for an aborted signal', async () => {
    const clock = new ManualClock(T0);
    await expect(sleepOn(clock, 500, AbortSignal.abort('gone'))).rejects.toBe('gone');
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits on the real timers with the system clock', async () => {
    const start = Date.now();
    await sleepOn(systemClock, 5);
    expect(Date.now() - start).toBeGreaterThanOrEqual(4);
  });
});

describe('clockScheduler', () => {
  it('is one scheduler per clock, telling its time', () => {
    const clock = new ManualClock(T0);
    expect(clockScheduler(clock)).toBe(clockScheduler(clock));
    expect(clockScheduler(clock)).not.toBe(clockScheduler(new ManualClock(T0)));
    expect(clockScheduler(clock).now()).toBe(T0);
  });

  it('drives rxjs timer(0, 1000) only as the clock advances', async () => {
    const clock = new ManualClock(T0);
    const seen: [number, number][] = [];
    const sub = timer(0, 1_000, clockScheduler(clock)).subscribe((n) => seen.push([n, clock.now()]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
    await clock.advance(0);
    expect(seen).toEqual([[0, T0]]);
    await clock.advance(999);
    expect(seen).toHaveLength(1);
    await clock.advance(2_001);
    expect(seen).toEqual([
      [0, T0],
      [1, T0 + 1_000],
      [2, T0 + 2_000],
      [3, T0 + 3_000],
    ]);
    sub.unsubscribe();
  });

  it('cancels the pending timer on unsubscribe', async () => {
    const clock = new ManualClock(T0);
    const seen: number[] = [];
    const sub = timer(0, 1_000, clockScheduler(clock)).subscribe((n) => seen.push(n));
    await clock.advance(1_500);
    expect(seen).toEqual([0, 1]);
    sub.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(10_000);
    expect(seen).toEqual([0, 1]);
  });
});
