import type { Clock } from '../../clock.js';

/** One timer on `clock` that calls `onWake` at the instant it was last armed for. */
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
      Math.max(0, atMs - now),
    );
  }

  cancel(): void {
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
    this.atMs = Number.POSITIVE_INFINITY;
  }
}
