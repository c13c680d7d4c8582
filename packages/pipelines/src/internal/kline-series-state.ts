import type { Bar, BarUpdate, KlineType } from '@quoteflow/core';

/** Someone waiting on a re-read of history from `fromMs`: called with its bars, or undefined when it failed. */
export interface RereadWaiter {
  readonly fromMs: number;
  readonly done: (bars: readonly Bar[] | undefined) => void;
}

/**
 * What a K-line sync knows of one series beyond `mergeBars`: its newest bar not yet final (for the
 * settle step), re-reads asked for, and, on a first backfill of N bars (read as N + 1, since the
 * newest may still be forming), the window that keeps exactly N closed bars.
 */
export class KlineSeriesState {
  /** Newest bar start seen that is not final yet, and when its newest values were read. */
  newestPending: number | undefined;
  newestPendingReadAtMs = 0;
  /** Newest bar start emitted final. */
  newestFinal: number | undefined;
  /** A re-read of history from this start is wanted (the earliest asked), or in flight. */
  rereadFromMs: number | undefined;
  rereading = false;
  /** Told what the next re-read from at or before their start found (undefined: it failed). */
  rereadWaiters: RereadWaiter[] = [];
  #oldestOfBackfill: number | undefined;
  #newestOfBackfill: number | undefined;
  #newestOfBackfillFinal = false;
  #heldOldest: BarUpdate | undefined;
  #windowEnded = false;

  constructor(
    readonly code: string,
    readonly klineType: KlineType,
  ) {}

  /** A first backfill read N + 1 bars (oldest first): the window of exactly N closed bars. */
  beginBackfillWindow(history: readonly Bar[]): void {
    this.#oldestOfBackfill = history[0]?.tsMs;
    this.#newestOfBackfill = history.at(-1)?.tsMs;
  }

  /**
   * Notes an update from `mergeBars`; returns whether it goes to the sinks now. With a window, the
   * oldest of the N + 1 waits for {@link KlineSeriesState.endBackfillWindow}; in a backfill-only run
   * bars that closed after the backfill are the next run's.
   */
  note(u: BarUpdate, backfillOnly: boolean): boolean {
    if (!u.final) {
      if (this.newestPending === undefined || u.tsMs >= this.newestPending) {
        this.newestPending = u.tsMs;
        this.newestPendingReadAtMs = u.readAtMs;
      }
      return true;
    }
    if (this.newestPending !== undefined && u.tsMs >= this.newestPending) this.newestPending = undefined;
    if (this.newestFinal === undefined || u.tsMs > this.newestFinal) this.newestFinal = u.tsMs;
    if (u.tsMs === this.#newestOfBackfill) this.#newestOfBackfillFinal = true;
    if (this.#newestOfBackfill === undefined) return true;
    if (backfillOnly && u.tsMs > this.#newestOfBackfill) return false;
    if (u.tsMs === this.#oldestOfBackfill && !this.#windowEnded) {
      this.#heldOldest = u;
      return false;
    }
    return true;
  }

  /**
   * Ends the window: the held oldest bar, when it belongs to the N (the newest bar of the backfill
   * did not close). A live run ends it right after the first read (the N most recent closed bars of
   * that moment: with the market closed, all N + 1 are closed and the oldest is not one of them); a
   * backfill-only run once its newest bars had a chance to settle.
   */
  endBackfillWindow(): BarUpdate | undefined {
    this.#windowEnded = true;
    return this.#newestOfBackfillFinal ? undefined : this.#heldOldest;
  }
}
