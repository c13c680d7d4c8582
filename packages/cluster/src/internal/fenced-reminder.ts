import type { Clock } from '@quoteflow/core';

/** While a worker is fenced (Redis away, or its lease lapsed), a `warning` event repeats this often, in ms. */
export const FENCED_REMINDER_MS = 5_000;

/**
 * A fenced worker does nothing until a heartbeat gets through again: says so every {@link FENCED_REMINDER_MS}, not
 * once, with how long it has lasted on the membership's monotonic clock.
 */
export class FencedReminder {
  private readonly clock: Clock;
  private readonly say: (message: string) => void;
  private timer: unknown;

  constructor(clock: Clock, say: (message: string) => void) {
    this.clock = clock;
    this.say = say;
  }

  /** Starts reminding, the first time one period from now; nothing if it reminds already. */
  start(): void {
    if (this.timer !== undefined) return;
    const since = this.clock.now();
    const remind = (): void => {
      this.timer = this.clock.setTimeout(remind, FENCED_REMINDER_MS);
      this.say(
        `fenced for ${Math.round((this.clock.now() - since) / 1000)} s (Redis unreachable, or this worker was paused past its lease): it holds no series until a heartbeat gets through`,
      );
    };
    this.timer = this.clock.setTimeout(remind, FENCED_REMINDER_MS);
  }

  /** Stops reminding (the fence is over, or the worker stops). */
  stop(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
