import { type BarUpdate, seriesKey } from '@quoteflow/core';
import { addWatermark, type SeriesWatermark } from './files/dataset-log-format.js';

/**
 * What a committing sink holds of each series, and the final bars it took since: the rule that
 * makes a replay harmless, for every `CommittingSink` (write your own with it). A final bar is new
 * when no commit covers it (`first <= tsMs <= last`) and it was not taken since (by a checkpoint in
 * progress or after it). Bars come in order within each run: newer than `last`, or, when history
 * grows backwards, a page older than everything taken (oldest first within the page, the pages
 * newest first); the extents of each run taken say what was taken.
 */
export class SeriesIntake {
  #committed: Map<string, SeriesWatermark>;
  /** Taken by the checkpoint in progress, not yet committed: runs per series. */
  #committing = new Map<string, SeriesWatermark[]>();
  /** Taken since the last checkpoint began: runs per series. */
  #pending = new Map<string, SeriesWatermark[]>();
  /** Starts covered by the commits but not held, per series ({@link SeriesIntake.reopen}). */
  readonly #reopened = new Map<string, Set<number>>();

  constructor(committed: ReadonlyMap<string, SeriesWatermark>) {
    this.#committed = new Map(committed);
  }

  /** What the commits hold per series (`seriesKey`). */
  get committed(): ReadonlyMap<string, SeriesWatermark> {
    return this.#committed;
  }

  /**
   * Bars of a series that its commits cover but that are not held (a file of them was lost): the
   * next final bar of each such start is taken once, as new, though the watermark covers it.
   */
  reopen(key: string, starts: readonly number[]): void {
    let open = this.#reopened.get(key);
    if (open === undefined) this.#reopened.set(key, (open = new Set()));
    for (const ts of starts) open.add(ts);
  }

  /** Whether the final bar is new to the sink; records it as taken if so. */
  take(u: Pick<BarUpdate, 'code' | 'klineType' | 'tsMs'>): boolean {
    const key = seriesKey(u.code, u.klineType);
    const ts = u.tsMs;
    // A reopened start is taken once (the set forgets it), whatever the extents say.
    const reopened = this.#reopened.get(key)?.delete(ts) === true;
    if (
      !reopened &&
      (covers(this.#committed.get(key), ts) || this.#committing.get(key)?.some((w) => covers(w, ts)))
    )
      return false;
    let runs = this.#pending.get(key);
    if (runs === undefined) {
      runs = [];
      this.#pending.set(key, runs);
    }
    if (!reopened && runs.some((w) => covers(w, ts))) return false;
    // The run this bar continues: the newest one that ends before it (runs do not overlap).
    let below: number | undefined;
    for (let i = 0; i < runs.length; i++)
      if (runs[i]!.last < ts && (below === undefined || runs[i]!.last > runs[below]!.last)) below = i;
    const bar = { first: ts, last: ts, rows: 1 };
    if (below === undefined) runs.push(bar);
    else runs[below] = addWatermark(runs[below], bar);
    return true;
  }

  /** What was taken since the last checkpoint began: the next commit's watermarks. Held as committing. */
  drain(): ReadonlyMap<string, SeriesWatermark> {
    const gained = new Map<string, SeriesWatermark>();
    for (const [key, runs] of this.#pending) {
      let w: SeriesWatermark | undefined;
      for (const run of runs) w = addWatermark(w, run);
      if (w !== undefined) gained.set(key, w);
    }
    this.#committing = this.#pending;
    this.#pending = new Map();
    return gained;
  }

  /** The drained watermarks are committed. */
  commit(): void {
    for (const [key, runs] of this.#committing) {
      let w = this.#committed.get(key);
      for (const run of runs) w = addWatermark(w, run);
      if (w !== undefined) this.#committed.set(key, w);
    }
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
