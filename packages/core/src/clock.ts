import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { InvalidOptionError } from './errors.js';

/**
 * The one source of time of a quoteflow process: the client stamps when values were read with it,
 * the scheduler keeps its windows on it, sources poll on it, operators and pipelines judge with
 * it, and the simulator serves its market at it. Give every part the same clock, so that a test
 * which speeds market time up speeds the pipeline up too and nothing compares two different times.
 *
 * @example
 * ```ts
 * const clock = acceleratedClock({ speed: 30 }); // 30 market seconds per real second
 * const sim = await startSimulator({ clock });
 * const client = new QuoteflowClient({ baseUrl: sim.url, token: 'demo', clock });
 * ```
 */
export interface Clock {
  /** Epoch milliseconds (calendar time: sessions and daily resets need it, so not a monotonic origin). */
  now(): number;
  /** Calls `callback` once `delayMs` of this clock's time have passed. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The process clock: `Date.now()` and the global timers, looked up at call time so that fake timers
 * installed after import (`vi.useFakeTimers()`) still take effect.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A clock for measuring how long something took or may still last (a lease, a heartbeat, a time
 * budget of retries), never stepped by the wall clock: `now()` is `performance.timeOrigin +
 * performance.now()`, the process start's wall time plus the monotonic time since (so it reads like
 * epoch ms, but drifts from `Date.now()` by every step of the wall clock since the process started:
 * NTP, an operator, a VM resync). Its timers are the global ones, which Node runs on the same
 * monotonic time. Not for calendar questions (a session, a daily reset): those ask the pipeline's
 * clock. On Linux the monotonic clock does not advance while the whole machine is suspended (a
 * process paused by SIGSTOP or a container freeze is measured).
 */
export const monotonicClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Options of {@link acceleratedClock}. */
export interface AcceleratedClockOptions {
  /** Clock milliseconds per base millisecond (30 = thirty times real speed). */
  readonly speed: number;
  /** The clock's time at creation. @defaultValue the base clock's time at creation */
  readonly startMs?: number;
  /** @defaultValue {@link systemClock} */
  readonly base?: Clock;
}

/**
 * A clock that runs `speed` times faster than `base` (timers fire after `delayMs / speed` of base
 * time), optionally starting at another instant. For demos and tests that want market hours to pass
 * in seconds: pass the same clock to the simulator and to every quoteflow part.
 */
export function acceleratedClock(options: AcceleratedClockOptions): Clock {
  const { speed } = options;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed <= 0)
    throw new InvalidOptionError(
      'speed',
      `acceleratedClock: "speed" must be a positive number, got ${String(speed)}`,
    );
  const base = options.base ?? systemClock;
  const baseStart = base.now();
  const start = options.startMs ?? baseStart;
  if (!Number.isFinite(start))
    throw new InvalidOptionError(
      'startMs',
      `acceleratedClock: "startMs" must be epoch ms, got ${String(start)}`,
    );
  return {
    now: () => Math.floor(start + (base.now() - baseStart) * speed),
    setTimeout: (callback, delayMs) => base.setTimeout(callback, Math.max(0, delayMs) / speed),
    clearTimeout: (handle) => base.clearTimeout(handle),
  };
}

interface ManualTimer {
  readonly id: number;
  readonly atMs: number;
  readonly callback: () => void;
}

/**
 * A clock that moves only when told to: for unit tests that must cross a boundary exactly.
 * Timers fire in time order (ties in creation order) while {@link ManualClock.advance} passes them,
 * with `now()` equal to each timer's due time as it runs.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(Date.UTC(2026, 0, 5, 14, 30));
 * clock.setTimeout(() => console.log(clock.now()), 1_000);
 * await clock.advance(1_000); // logs the start + 1 s
 * ```
 */
export class ManualClock implements Clock {
  #nowMs: number;
  #nextId = 1;
  #timers: ManualTimer[] = [];

  constructor(startMs = 0) {
    if (!Number.isFinite(startMs))
      throw new InvalidOptionError('startMs', `ManualClock: "startMs" must be epoch ms, got ${startMs}`);
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const timer = { id: this.#nextId++, atMs: this.#nowMs + Math.max(0, delayMs), callback };
    // Kept sorted by due time, then creation: insertion after every timer due at or before it.
    let i = this.#timers.length;
    while (i > 0 && this.#timers[i - 1]!.atMs > timer.atMs) i--;
    this.#timers.splice(i, 0, timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    const i = this.#timers.findIndex((t) => t.id === handle);
    if (i >= 0) this.#timers.splice(i, 1);
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves the clock `ms` forward, firing every timer due on the way. Between timers it lets
   * pending promise callbacks run, so `await`-based code scheduled by one timer can set the next.
   */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.#nowMs + ms);
  }

  /** Moves the clock to `targetMs` (never backwards), firing every timer due on the way. */
  async advanceTo(targetMs: number): Promise<void> {
    for (;;) {
      await settlePromises();
      const next = this.#timers[0];
      if (next === undefined || next.atMs > targetMs) break;
      this.#timers.shift();
      if (next.atMs > this.#nowMs) this.#nowMs = next.atMs;
      next.callback();
    }
    if (targetMs > this.#nowMs) this.#nowMs = targetMs;
    await settlePromises();
  }
}

async function settlePromises(): Promise<void> {
  // A macrotask turn lets every chained microtask (and undici's socket callbacks) run first.
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Resolves after `ms` of `clock` time; rejects with the signal's reason when it aborts first. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An RxJS scheduler on `clock`: `timer(…, clockScheduler(clock))`, `delay`, `interval` and every
 * time-based operator then run on the same time as the rest of quoteflow. One scheduler per clock
 * is cached, so operators that compare schedulers see the same object.
 */
export function clockScheduler(clock: Clock): SchedulerLike {
  let scheduler = SCHEDULERS.get(clock);
  if (scheduler === undefined) {
    scheduler = new ClockScheduler(clock);
    SCHEDULERS.set(clock, scheduler);
  }
  return scheduler;
}

const SCHEDULERS = new WeakMap<Clock, SchedulerLike>();

class ClockScheduler implements SchedulerLike {
  constructor(private readonly clock: Clock) {}

  now(): number {
    return this.clock.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return new ClockAction(this.clock, work).schedule(state, delay);
  }
}

/** One scheduled piece of work; rescheduling from inside `work` replaces the pending timer. */
class ClockAction<T> extends Subscription implements SchedulerAction<T> {
  #handle: unknown;
  #pending = false;
  #state: T | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => this.#cancel());
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.#cancel();
    this.#state = state;
    this.#pending = true;
    this.#handle = this.clock.setTimeout(() => this.#run(), delay);
    return this;
  }

  #run(): void {
    this.#handle = undefined;
    if (this.closed || !this.#pending) return;
    this.#pending = false;
    try {
      this.work.call(this, this.#state);
    } catch (err) {
      this.unsubscribe();
      throw err;
    }
  }

  #cancel(): void {
    if (this.#handle !== undefined) this.clock.clearTimeout(this.#handle);
    this.#handle = undefined;
    this.#pending = false;
  }
}
