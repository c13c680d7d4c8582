/** A running pipeline: `stop()` stops polling, flushes every sink, writes the state and resolves. */
export interface PipelineHandle<S> {
  /** Resolves when the pipeline has ended (after `stop()`, the signal, or the end of a backfill-only run). */
  readonly done: Promise<S>;
  /** Stops, flushes, writes state; idempotent; resolves like `done`. */
  stop(): Promise<S>;
}
