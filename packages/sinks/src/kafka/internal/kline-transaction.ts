/**
 * The exactly-once K-line sink's one transaction at a time: `KafkaSink` batches and sends as
 * always, through {@link KlineTransaction.producerDriver}, which begins a transaction before the
 * first batch after a commit; the sink commits it with its watermark records.
 */
import { KafkaSinkClosedError } from '../kafka-sink-closed-error.js';
import type { KafkaDriverOptions, KafkaProducerDriver } from '../kafka-producer-driver.js';
import type { KafkaTransactionalDriver } from '../kafka-transactional-driver.js';
import type { KafkaMessage } from '../to-kafka-message.js';
import { withTimeout } from './with-timeout.js';

export class KlineTransaction {
  #open = false;
  #refusing = false;

  constructor(
    private readonly driver: KafkaTransactionalDriver,
    private readonly timeouts: Pick<KafkaDriverOptions, 'deliveryTimeoutMs' | 'requestTimeoutMs'>,
  ) {}

  /** Whether a transaction is open (something was sent since the last commit or abort). */
  get open(): boolean {
    return this.#open;
  }

  /** The driver as `KafkaSink` sees it: every batch goes into the open transaction. */
  producerDriver(): KafkaProducerDriver {
    const driver = this.driver;
    return {
      name: driver.name,
      connect: () => driver.connect(),
      ensureTopics: (topics) => driver.ensureTopics(topics),
      send: (messages) => this.#send(messages),
      close: () => driver.close(),
    };
  }

  /** From now on batches are refused (the sink stopped or closes): nothing more joins the transaction. */
  refuse(): void {
    this.#refusing = true;
  }

  /** Produces `marks` into the open transaction and commits it, each within `deliveryTimeoutMs`. */
  async commit(marks: readonly KafkaMessage[]): Promise<void> {
    const timeoutMs = this.timeouts.deliveryTimeoutMs;
    if (marks.length > 0) await withTimeout(this.driver.send(marks), timeoutMs, 'deliveryTimeoutMs');
    await withTimeout(this.driver.commit(), timeoutMs, 'deliveryTimeoutMs');
    this.#open = false;
  }

  /**
   * Aborts the open transaction, if any, within `requestTimeoutMs`; resolves with the error when
   * that failed (the broker then aborts it after the transaction timeout).
   */
  async abort(): Promise<unknown> {
    if (!this.#open) return undefined;
    this.#open = false;
    return withTimeout(this.driver.abort(), this.timeouts.requestTimeoutMs, 'requestTimeoutMs').then(
      () => undefined,
      (err: unknown) => err,
    );
  }

  async #send(messages: readonly KafkaMessage[]): Promise<void> {
    if (this.#refusing) throw new KafkaSinkClosedError();
    if (!this.#open) {
      await this.driver.begin();
      this.#open = true;
    }
    await this.driver.send(messages);
  }
}
