import type { Clock } from '@quoteflow/core';

/**
 * A pipeline's checkpoints, one at a time: every `everyMs` on the clock once started, and on demand
 * (`now()`, e.g. before handing series to another worker); a failure goes to `onError` and stops the
 * timer.
 */
export class Checkpoints {
  #chain: Promise<void> = Promise.resolve();
  #timer: unknown;
  #stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly everyMs: number,
    private readonly checkpoint: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Arms the timer (nothing with `everyMs` 0). */
  start(): void {
    if (this.everyMs <= 0 || this.#stopped) return;
    this.#timer = this.clock.setTimeout(() => {
      this.#chain = this.#chain.then(this.checkpoint).then(() => this.start(), this.onError);
    }, this.everyMs);
  }

  /** A checkpoint after those already queued; resolves when it is done. */
  now(): Promise<void> {
    const next = this.#chain.then(this.checkpoint);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /** Stops the timer, waits for queued checkpoints, then makes the last one. */
  async final(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    await this.#chain;
    await this.checkpoint();
  }
}
