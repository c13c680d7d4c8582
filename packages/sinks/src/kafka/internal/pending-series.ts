/** What one transaction of the K-line sink took per series: the final bars, and what they add. */
import { addWatermark, type SeriesWatermark } from '../../files/dataset-log-format.js';

export class PendingSeries {
  /** Per series: the bar starts taken (kept only where repeats are dropped), and what they add. */
  readonly #series = new Map<string, { taken: Set<number> | undefined; added: SeriesWatermark }>();
  #bars = 0;

  /** @param remember - keep each bar start, so {@link PendingSeries.has} can answer */
  constructor(private readonly remember: boolean) {}

  /** Final bars taken. */
  get bars(): number {
    return this.#bars;
  }

  has(series: string, tsMs: number): boolean {
    return this.#series.get(series)?.taken?.has(tsMs) === true;
  }

  take(series: string, tsMs: number): void {
    this.#bars++;
    const held = this.#series.get(series);
    const added = addWatermark(held?.added, { first: tsMs, last: tsMs, rows: 1 });
    if (held === undefined) {
      this.#series.set(series, { taken: this.remember ? new Set([tsMs]) : undefined, added });
    } else {
      held.added = added;
      held.taken?.add(tsMs);
    }
  }

  /** Per series, what the bars taken add (their oldest and newest start, their count). */
  added(): Map<string, SeriesWatermark> {
    return new Map([...this.#series].map(([key, s]) => [key, s.added]));
  }
}
