import type { BarUpdate } from '@quoteflow/core';
import type { CommittingSink, SeriesWatermark, SinkCheckpoint } from '@quoteflow/sinks';

/**
 * A committing sink whose watermarks count the rows its files really hold: after committed files
 * were lost, the commit log still counts their rows, and a run would think a series holds more
 * bars than it does (no older history fetched, `older than the 500 held` where 346 are). Each
 * series' rows are lowered by what its files lacked when they were read (`heldRows`, after the
 * repair); everything else goes to the sink as it is.
 */
export class HeldRowsSink implements CommittingSink {
  readonly name: string;
  readonly checkpointEveryMs: number;
  /** Rows the log counts beyond the files, per series. */
  readonly #excess = new Map<string, number>();
  #cached: ReadonlyMap<string, SeriesWatermark> | undefined;

  constructor(
    private readonly inner: CommittingSink,
    heldRows: ReadonlyMap<string, number>,
  ) {
    this.name = inner.name;
    this.checkpointEveryMs = inner.checkpointEveryMs;
    const marks = inner.watermarks();
    for (const [key, rows] of heldRows) {
      const logged = marks?.get(key)?.rows ?? rows;
      if (logged > rows) this.#excess.set(key, logged - rows);
    }
  }

  watermarks(): ReadonlyMap<string, SeriesWatermark> | undefined {
    const marks = this.inner.watermarks();
    if (marks === undefined || this.#excess.size === 0) return marks;
    if (this.#cached === undefined) {
      const out = new Map(marks);
      for (const [key, excess] of this.#excess) {
        const w = out.get(key);
        if (w !== undefined) out.set(key, { ...w, rows: Math.max(0, w.rows - excess) });
      }
      this.#cached = out;
    }
    return this.#cached;
  }

  write(update: BarUpdate): void {
    this.inner.write(update);
  }

  async checkpoint(): Promise<SinkCheckpoint> {
    try {
      return await this.inner.checkpoint();
    } finally {
      this.#cached = undefined;
    }
  }

  async refresh(): Promise<void> {
    try {
      await this.inner.refresh();
    } finally {
      this.#cached = undefined;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
