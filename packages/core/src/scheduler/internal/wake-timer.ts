import type { Clock } from '../../clock.js';

/** The longest delay Node's timers hold (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * One timer on `clock` that calls `onWake` at the instant it was last armed for. An instant further
 * than a timer can hold wakes it at the timer's limit instead (the owner then looks again), never
 * at once with Node's TimeoutOverflowWarning.
 */
export class WakeTimer {
  private handle: unknown;
  private atMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly onWake: () => void,
  ) {}

  /** Wakes at `atMs` instead of any earlier arming (never when `atMs` is not finite). */
  arm(atMs: number, now: number): void {
    if (atMs === this.atMs) return;
    this.cancel();
    if (!Number.isFinite(atMs)) return;
    this.atMs = atMs;
    this.handle = this.clock.setTimeout(
      () => {
        this.handle = undefined;
        this.atMs = Number.POSITIVE_INFINITY;
        this.onWake();
      },
      Math.min(MAX_TIMER_DELAY_MS, Math.max(0, atMs - now)),
    );
  }

  cancel(): void {
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
    this.atMs = Number.POSITIVE_INFINITY;
  }
}
