import type { KafkaMessage } from '../to-kafka-message.js';

/** A record the K-line sink took, and whether it was released from a hold (held for order). */
export interface TakenRecord {
  readonly message: KafkaMessage;
  readonly released: boolean;
}

/**
 * The K-line sink's records taken and not yet acknowledged by the broker: how many, against
 * `maxBufferedRecords`, and those taken while a checkpoint commits, which wait for the next
 * transaction. Records released from a hold count apart from the limit: the hold bounds them (a
 * series' backfill), and one release may well pass it.
 */
export class BufferedRecords {
  #count = 0;
  #released = 0;
  #waiting: TakenRecord[] = [];

  constructor(private readonly max: number) {}

  /** Records taken and not acknowledged, released ones included. */
  get count(): number {
    return this.#count;
  }

  /** Counts one record taken; false (not counted) when one more would pass the limit. */
  reserve(released: boolean): boolean {
    if (!released && this.#count - this.#released >= this.max) return false;
    this.#count++;
    if (released) this.#released++;
    return true;
  }

  /** A record acknowledged, failed, or never to be sent. */
  settle(released: boolean): void {
    this.#count--;
    if (released) this.#released--;
  }

  /** Keeps a record for the next transaction (a checkpoint commits). */
  wait(record: TakenRecord): void {
    this.#waiting.push(record);
  }

  /** The records kept for the next transaction, in the order taken; none are kept after. */
  drainWaiting(): TakenRecord[] {
    const waiting = this.#waiting;
    this.#waiting = [];
    return waiting;
  }
}
