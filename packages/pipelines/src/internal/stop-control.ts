import type { PipelineHandle } from '../pipeline-handle.js';

/**
 * A pipeline's own stop: aborted by `stop()`, by the caller's signal, or by a failure, so every
 * wait and source of the pipeline listens to one signal.
 */
export class StopControl {
  readonly #controller = new AbortController();
  readonly #outer: AbortSignal | undefined;
  readonly #onOuterAbort = (): void => this.#controller.abort(this.#outer?.reason);

  constructor(outer: AbortSignal | undefined) {
    this.#outer = outer;
    if (outer?.aborted === true) this.#controller.abort(outer.reason);
    else outer?.addEventListener('abort', this.#onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  stop(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /** Stops listening to the caller's signal (when the pipeline ends). */
  release(): void {
    this.#outer?.removeEventListener('abort', this.#onOuterAbort);
  }

  /** The pipeline's handle for the run `done`: `stop()` stops and resolves like `done`. */
  handle<S>(done: Promise<S>): PipelineHandle<S> {
    done.catch(() => undefined); // handled by whoever awaits done/stop()
    return {
      done,
      stop: () => {
        this.stop(new Error('stopped'));
        return done;
      },
    };
  }
}
