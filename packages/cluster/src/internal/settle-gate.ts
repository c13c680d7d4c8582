import type { Clock } from '@quoteflow/core';

/**
 * Holds the first claim back until the member set has been still for `settleMs`, capped at 3× it
 * in all, so workers started together divide the items from the first moment instead of the first
 * one claiming everything and handing most of it over (`ClusterSyncOptions.startSettleMs`). Waits
 * on the membership's monotonic clock.
 */
export class SettleGate {
  private readonly clock: Clock;
  private readonly settleMs: number;
  private settled: boolean;
  private timer: unknown;
  /** When the wait ends however often the set changes (3× `settleMs` after the first change). */
  private deadline: number | undefined;

  constructor(clock: Clock, settleMs: number) {
    this.clock = clock;
    this.settleMs = settleMs;
    this.settled = settleMs <= 0;
  }

  /**
   * Calls `then` now once the set has settled; before that, after `settleMs` more without another
   * change (each call is a change: it restarts the wait, up to the cap).
   */
  afterSettling(then: () => void): void {
    if (this.settled) return then();
    const now = this.clock.now();
    this.deadline ??= now + this.settleMs * 3;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.settled = true;
        then();
      },
      Math.max(0, Math.min(this.settleMs, this.deadline - now)),
    );
  }

  /** Drops a wait under way (the worker stops). */
  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
  }
}
