/** One value waiting for its acknowledgement. */
export interface Pending<T> {
  readonly value: T;
  acked: boolean;
}

/**
 * Values held until each is acknowledged, released in the order they came even when the
 * acknowledgements arrive out of order: a FIFO with a moving head, compacted now and then so a
 * long stream neither copies on every release nor keeps what it released.
 */
export class AckedInOrder<T> {
  #entries: (Pending<T> | undefined)[] = [];
  #head = 0;

  /** How many values are held (acknowledged or not). */
  get size(): number {
    return this.#entries.length - this.#head;
  }

  push(value: T, acked: boolean): Pending<T> {
    const entry: Pending<T> = { value, acked };
    this.#entries.push(entry);
    return entry;
  }

  /** Hands `emit` every acknowledged value at the head, in order, until one is not or `stopped()`. */
  release(emit: (value: T) => void, stopped: () => boolean): void {
    // `#entries` is read afresh each turn: `emit` may re-enter and compact it.
    while (!stopped() && this.#head < this.#entries.length && this.#entries[this.#head]!.acked) {
      const { value } = this.#entries[this.#head]!;
      this.#entries[this.#head] = undefined;
      this.#head++;
      emit(value);
    }
    if (this.#head === this.#entries.length) {
      this.#entries = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
