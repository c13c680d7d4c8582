import { seriesKey, type BarUpdate } from '@quoteflow/core';
import { addWatermark, type SeriesWatermark } from './files/dataset-log-format.js';

/**
 * What a committing sink holds of each series, and the final bars it took since: the rule that
 * makes a replay harmless, for every `CommittingSink` (write your own with it). A final bar is new
 * when no commit covers it (`first <= tsMs <= last`) and it was not taken since (by a checkpoint in
 * progress or after it). Bars come in order within each direction (newer than `last`, or older
 * than `first` when history grows backwards), so the extents of what was taken say what was taken.
 */
export class SeriesIntake {
  #committed: Map<string, SeriesWatermark>;
  /** Taken by the checkpoint in progress, not yet committed. */
  #committing = new Map<string, SeriesWatermark>();
  /** Taken since the last checkpoint began. */
  #pending = new Map<string, SeriesWatermark>();

  constructor(committed: ReadonlyMap<string, SeriesWatermark>) {
    this.#committed = new Map(committed);
  }

  /** What the commits hold per series (`seriesKey`). */
  get committed(): ReadonlyMap<string, SeriesWatermark> {
    return this.#committed;
  }

  /** Whether the final bar is new to the sink; records it as taken if so. */
  take(u: Pick<BarUpdate, 'code' | 'klineType' | 'tsMs'>): boolean {
    const key = seriesKey(u.code, u.klineType);
    const ts = u.tsMs;
    if (covers(this.#committed.get(key), ts) || covers(this.#committing.get(key), ts)) return false;
    const pending = this.#pending.get(key);
    if (covers(pending, ts)) return false;
    this.#pending.set(key, addWatermark(pending, { first: ts, last: ts, rows: 1 }));
    return true;
  }

  /** What was taken since the last checkpoint began: the next commit's watermarks. Held as committing. */
  drain(): ReadonlyMap<string, SeriesWatermark> {
    const gained = this.#pending;
    this.#pending = new Map();
    this.#committing = gained;
    return gained;
  }

  /** The drained watermarks are committed. */
  commit(): void {
    for (const [key, w] of this.#committing)
      this.#committed.set(key, addWatermark(this.#committed.get(key), w));
    this.#committing = new Map();
  }

  /** What the commits hold, read again (another writer's commits included; this one's too). */
  reset(committed: ReadonlyMap<string, SeriesWatermark>): void {
    this.#committed = new Map(committed);
  }
}

function covers(w: SeriesWatermark | undefined, ts: number): boolean {
  return w !== undefined && w.first <= ts && ts <= w.last;
}
