/**
 * The pause after the service answered "rate limit" although every known rule held (another
 * process on the token, or a clock between us and it), and the paced recovery after it. One pause
 * for every scope: a 429 does not say which rule the service applied.
 *
 * A report pauses every start for `backoffMs`, doubled for each report that comes before the
 * previous recovery ended (up to `maxBackoffMs`); reports during a pause belong to the same
 * episode. Afterwards starts are paced at half the sustained rate for `recoveryMs`, then at the
 * sustained rate for as long again, so a backlog never leaves in a burst.
 */
export class RateLimitBackoff {
  /** Reports since the scheduler was built, pauses or not. */
  reports = 0;
  /** Starts wait until this instant (`-Infinity` when never paused). */
  pausedUntilMs = Number.NEGATIVE_INFINITY;
  /** Starts are paced until this instant. */
  recoveringUntilMs = Number.NEGATIVE_INFINITY;
  private level = 0;

  constructor(
    readonly backoffMs: number,
    readonly maxBackoffMs: number,
    readonly recoveryMs: number,
  ) {}

  /** Counts a report at `nowMs`; true when it began a new pause (false inside the current one). */
  report(nowMs: number): boolean {
    this.reports++;
    if (nowMs < this.pausedUntilMs) return false;
    this.level = nowMs < this.recoveringUntilMs ? this.level + 1 : 1;
    const pauseMs = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (this.level - 1));
    this.pausedUntilMs = nowMs + pauseMs;
    this.recoveringUntilMs = this.pausedUntilMs + 2 * this.recoveryMs;
    return true;
  }

  /**
   * The pacing of starts at `nowMs` during a recovery, as the minimum spacing between two starts
   * of an endpoint whose evenly paced spacing is `intervalMs()` (twice that in the first half), or
   * `undefined` when not recovering.
   */
  paceMs(nowMs: number, intervalMs: () => number): number | undefined {
    if (!(nowMs < this.recoveringUntilMs)) return undefined;
    const interval = intervalMs();
    return nowMs < this.recoveringUntilMs - this.recoveryMs ? 2 * interval : interval;
  }
}
