import { type BarUpdate, seriesKey } from '@quoteflow/core';

/**
 * What the K-line sink holds back for order: every update of a series whose history is open
 * (between its `begin` marker and its end), released at the end oldest first (by bar start;
 * updates of one bar keep their arrival order, so a forming update stays before its final). A
 * history read newest page first thus reaches the topic as one ascending run.
 */
export class HeldHistory {
  readonly #held = new Map<string, BarUpdate[]>();
  #size = 0;

  /** Updates held, all series together. */
  get size(): number {
    return this.#size;
  }

  /** The series' history began: its updates are held from now on (those held already stay). */
  open(key: string): void {
    if (!this.#held.has(key)) this.#held.set(key, []);
  }

  /** Holds `update` if its series' history is open; false when it is not (the update goes on). */
  hold(update: BarUpdate): boolean {
    if (this.#held.size === 0) return false;
    const held = this.#held.get(seriesKey(update.code, update.klineType));
    if (held === undefined) return false;
    held.push(update);
    this.#size++;
    return true;
  }

  /** The series' history ended: what was held of it, oldest first; nothing is held for it any more. */
  release(key: string): BarUpdate[] {
    const held = this.#held.get(key);
    if (held === undefined) return [];
    this.#held.delete(key);
    this.#size -= held.length;
    // Array.prototype.sort is stable: updates of one bar stay in arrival order.
    return held.sort((a, b) => a.tsMs - b.tsMs);
  }

  /** Forgets everything held (the sink closes: held updates were never taken). */
  clear(): void {
    this.#held.clear();
    this.#size = 0;
  }
}
