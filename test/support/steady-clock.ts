/**
 * An accelerated clock that stops while its process is starved of CPU: for in-process tests that
 * run market time thousands of times faster than real time, where a stall of half a real second
 * (a loaded machine, more test workers than cores) would otherwise be hours of market time in which
 * nothing could happen, and a sync's polls would miss whole bars.
 *
 * A heartbeat every `tickMs` credits the real time since the previous beat, but never more than
 * `maxStepMs` of it: a beat that comes late (the process did not run) adds `maxStepMs` only, so the
 * clock freezes for the rest of the stall. Timers fire on the beats, in order of their due time.
 * Give the same clock to the simulator and to every quoteflow part, as with `acceleratedClock`,
 * and `close()` it at the end (the heartbeat keeps the process alive).
 *
 * @example
 * ```ts
 * const clock = steadyClock({ speed: 7_200, startMs: Date.parse('2026-11-22T16:00:00Z') });
 * const sim = await startSimulator({ clock });
 * // … klineSync({ clock, … }) …
 * clock.close();
 * ```
 */
import type { Clock } from '@quoteflow/core';

export interface SteadyClockOptions {
  /** Clock ms per real ms while the process runs. */
  readonly speed: number;
  /** The clock's time at creation. */
  readonly startMs: number;
  /** Real ms between heartbeats. @defaultValue 2 */
  readonly tickMs?: number;
  /** The most real ms one heartbeat credits: a longer gap is a stall. @defaultValue 25 */
  readonly maxStepMs?: number;
}

interface Timer {
  readonly id: number;
  readonly atMs: number;
  readonly callback: () => void;
}

export interface SteadyClock extends Clock {
  /** Runs the clock at `speed` from now on (a test may start slower, while a backfill is read). */
  setSpeed(speed: number): void;
  /** Real ms the clock stood still because heartbeats came late (for a test's log line). */
  readonly stalledMs: number;
  /** Stops the heartbeat; timers not yet due never fire. */
  close(): void;
}

export function steadyClock(options: SteadyClockOptions): SteadyClock {
  const { startMs } = options;
  let speed = options.speed;
  const tickMs = options.tickMs ?? 2;
  const maxStepMs = options.maxStepMs ?? 25;
  let nowMs = startMs;
  let lastBeat = performance.now();
  let stalledMs = 0;
  let nextId = 1;
  let timers: Timer[] = [];
  // The time since the last beat, as the next beat would credit it.
  const pendingMs = (): number => Math.min(performance.now() - lastBeat, maxStepMs) * speed;
  const beat = setInterval(() => {
    const real = performance.now();
    const gap = real - lastBeat;
    if (gap > maxStepMs) stalledMs += gap - maxStepMs;
    nowMs += Math.min(gap, maxStepMs) * speed;
    lastBeat = real;
    // A callback may set timers: those due already fire in this beat too.
    for (let due = timers[0]; due !== undefined && due.atMs <= nowMs; due = timers[0]) {
      timers.shift();
      due.callback();
    }
  }, tickMs);
  return {
    now: () => Math.floor(nowMs + pendingMs()),
    setTimeout: (callback, delayMs) => {
      const timer = { id: nextId++, atMs: nowMs + pendingMs() + Math.max(0, delayMs), callback };
      // Kept sorted by due time, then creation.
      let i = timers.length;
      while (i > 0 && timers[i - 1]!.atMs > timer.atMs) i--;
      timers.splice(i, 0, timer);
      return timer.id;
    },
    clearTimeout: (handle) => {
      timers = timers.filter((t) => t.id !== handle);
    },
    setSpeed: (next) => {
      const real = performance.now();
      nowMs += Math.min(real - lastBeat, maxStepMs) * speed;
      lastBeat = real;
      speed = next;
    },
    get stalledMs() {
      return stalledMs;
    },
    close: () => {
      clearInterval(beat);
      timers = [];
    },
  };
}
