import type { HistoryMarker } from '@quoteflow/core';
import type { KlineSeriesState } from './kline-series-state.js';

/**
 * The history markers of a K-line run: each series' backfill between a `begin` and one end
 * (`complete`, or `cut-short` when the series leaves the run first). Tracked by the series' state,
 * not its key, so a backfill that outlives its series' removal ends nothing of a later re-add.
 */
export class HistoryBrackets {
  readonly #open = new Set<KlineSeriesState>();

  constructor(private readonly emit: (marker: HistoryMarker) => void) {}

  /** The series' history starts coming (its backfill begins). */
  begin(s: KlineSeriesState): void {
    this.#open.add(s);
    this.#say(s, 'begin');
  }

  /** Ends the series' history, if it is open. */
  end(s: KlineSeriesState, phase: 'complete' | 'cut-short'): void {
    if (this.#open.delete(s)) this.#say(s, phase);
  }

  /** Ends every history still open. */
  endAll(phase: 'complete' | 'cut-short'): void {
    for (const s of [...this.#open]) this.end(s, phase);
  }

  #say(s: KlineSeriesState, phase: HistoryMarker['phase']): void {
    this.emit({ type: 'history', code: s.code, klineType: s.klineType, phase });
  }
}
