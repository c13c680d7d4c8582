/**
 * The exactly-once K-line sink's transaction in progress, and how it is redone. `KafkaSink`
 * batches and sends as always, through {@link KlineTransaction.producerDriver}, which begins a
 * transaction before the first batch after a commit; the sink commits it with its watermark
 * records.
 *
 * An operation (a batch, the commit) that fails for a transient reason (a broker restarting, the
 * coordinator moving: {@link isRetryableKafkaError}) is redone, with core's `retryWithBudget`
 * backing off, until `deliveryTimeoutMs` from its start runs out: the producer is replaced by a
 * new one with the same transactional id, whose `InitProducerId` aborts what the broker still holds
 * of the failed attempt (and first lets a commit under way complete), and every batch of the
 * transaction goes again into a fresh one. The transaction therefore keeps its batches until it
 * commits: at most one checkpoint's records (the unacknowledged ones are capped by
 * `maxBufferedRecords` besides). A fencing or a refused authorization is never redone.
 */
import { QuoteflowError } from '@quoteflow/core';
import { monotonicClock, retryWithBudget } from '@quoteflow/core/internal';
import type { KafkaDriverOptions, KafkaProducerDriver } from '../kafka-producer-driver.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import { KafkaSinkClosedError } from '../kafka-sink-closed-error.js';
import type { KafkaSinkLogger } from '../kafka-sink.js';
import type { KafkaTransactionalDriver } from '../kafka-transactional-driver.js';
import type { KafkaMessage } from '../to-kafka-message.js';
import { isRetryableKafkaError } from './retryable-kafka-error.js';
import { withTimeout } from './with-timeout.js';

/** What a transactional operation's retries are bounded by. */
export type KlineTransactionTimeouts = Pick<
  KafkaDriverOptions,
  'brokers' | 'deliveryTimeoutMs' | 'requestTimeoutMs' | 'retryMaxDelayMs'
>;

/**
 * Reads the watermark topic and says whether the transaction committed (throwing `QF_FENCED` when
 * another producer's commit is there): see {@link KlineTransaction.commit}.
 */
export type CommitOutcomeCheck = (mayHaveCommitted: boolean) => Promise<'committed' | 'not-committed'>;

/**
 * Redoing a transaction took longer than `deliveryTimeoutMs` (`QF_KAFKA_TRANSACTION`, retryable by
 * opening the sink again; the cause of the sink error it leads to).
 */
export class TransactionRetriesExhausted extends QuoteflowError {
  constructor(message: string, options: { cause: unknown }) {
    super('QF_KAFKA_TRANSACTION', message, { retryable: true, cause: options.cause });
  }
}

export class KlineTransaction {
  #driver: KafkaTransactionalDriver;
  /** A transaction is open on `#driver`. */
  #open = false;
  /** The batches of the transaction in progress, acknowledged into its current attempt. */
  #kept: (readonly KafkaMessage[])[] = [];
  /** The current attempt failed: the next operation replaces the producer and sends `#kept` again. */
  #broken = false;
  /** The producer was replaced since the last commit: the commit reads the watermark topic first. */
  #replaced = false;
  /** A commit (EndTxn) went unanswered: it may have landed until the watermark topic says otherwise. */
  #unanswered = false;
  #retries = 0;
  readonly #refused = new AbortController();

  constructor(
    private readonly newDriver: () => KafkaTransactionalDriver,
    private readonly o: KlineTransactionTimeouts,
    private readonly logger: KafkaSinkLogger,
    /** The sink's lease check (its `fence` option): asked before each commit and each new producer. */
    private readonly mayWrite: () => boolean = () => true,
  ) {
    this.#driver = newDriver();
  }

  /** The producer in use (replaced after a transient failure). */
  get driver(): KafkaTransactionalDriver {
    return this.#driver;
  }

  /** Whether the transaction holds records to commit. */
  get pending(): boolean {
    return this.#kept.length > 0;
  }

  /** Whether the last commit got no answer and its outcome stayed unknown. */
  get unanswered(): boolean {
    return this.#unanswered;
  }

  /** Failed attempts redone so far. */
  get retries(): number {
    return this.#retries;
  }

  /** The driver as `KafkaSink` sees it: every batch goes into the open transaction. */
  producerDriver(): KafkaProducerDriver {
    return {
      name: this.#driver.name,
      connect: () => this.#driver.connect(),
      ensureTopics: (topics) => this.#driver.ensureTopics(topics),
      send: (messages) => this.#send(messages),
      close: () => this.#driver.close(),
    };
  }

  /** From now on nothing more joins the transaction, and a redo under way stops (the sink stopped or closes). */
  refuse(): void {
    this.#refused.abort(new KafkaSinkClosedError());
  }

  /**
   * Produces `marks` into the transaction and commits it, redoing it after a transient failure.
   *
   * A commit that got no answer (its request timed out, the connection dropped) may or may not
   * have landed, and sending the transaction again blindly could commit its bars twice. The new
   * producer's `InitProducerId` settles it: the coordinator answers only once the transaction is
   * complete (a commit it had begun is completed, markers written; an open one is aborted), and
   * the old producer can change nothing more (its epoch is fenced). `outcome` then reads the
   * watermark topic `read_committed` to its end: this transaction's watermark records there mean
   * it committed (done), the sink's previous ones that it did not (sent again, with the same
   * `marks`). Like reopening the sink, a new producer takes the transactional id back from
   * whoever holds it, so the check runs after every replacement: a commit the sink did not make,
   * to these series or under its transactional id (it lost its id or its series, and its
   * watermarks are stale), stops it with `QF_FENCED` before anything is sent again.
   */
  async commit(marks: readonly KafkaMessage[], outcome: CommitOutcomeCheck): Promise<void> {
    await this.#retrying(async () => {
      if (this.#broken) await this.#replace();
      if (this.#replaced) {
        if ((await this.#step(() => outcome(this.#unanswered))) === 'committed') return this.#ended();
        this.#replaced = false;
        this.#unanswered = false;
      }
      if (this.#broken) await this.#resend();
      if (marks.length > 0) await this.#step(() => this.#driver.send(marks));
      this.#checkLease('committed');
      this.#unanswered = true;
      await this.#step(() => this.#driver.commit());
      this.#ended();
    });
  }

  /**
   * Aborts the open transaction, if any, within `requestTimeoutMs`; resolves with the error when
   * that failed (the broker then aborts it after the transaction timeout, or the next producer
   * with this id does at once).
   */
  async abort(): Promise<unknown> {
    const open = this.#open;
    this.#open = false;
    this.#kept = [];
    if (!open) return undefined;
    return withTimeout(this.#driver.abort(), this.o.requestTimeoutMs, 'requestTimeoutMs').then(
      () => undefined,
      (err: unknown) => err,
    );
  }

  async #send(messages: readonly KafkaMessage[]): Promise<void> {
    await this.#retrying(async () => {
      if (this.#broken) {
        await this.#replace();
        await this.#resend();
      } else if (!this.#open) {
        await this.#step(() => this.#driver.begin());
        this.#open = true;
      }
      await this.#step(() => this.#driver.send(messages));
    });
    this.#kept.push(messages);
  }

  /** A new producer with the same transactional id: its InitProducerId ends what the old one left. */
  async #replace(): Promise<void> {
    this.#checkLease('sent again');
    const old = this.#driver;
    this.#driver = this.newDriver();
    this.#open = false;
    this.#replaced = true;
    // Not awaited: a broker that is down can keep it busy, and its requests are fenced from now on.
    old.close().catch(() => undefined);
    await this.#step(() => this.#driver.connect());
  }

  /** Begins a fresh transaction on the new producer and sends every kept batch into it, in order. */
  async #resend(): Promise<void> {
    await this.#step(() => this.#driver.begin());
    this.#open = true;
    for (const batch of this.#kept) await this.#step(() => this.#driver.send(batch));
    this.#broken = false;
  }

  /** Stops here, never retried, when the sink may no longer write its series. */
  #checkLease(what: string): void {
    if (this.mayWrite()) return;
    this.#refused.abort();
    throw new KafkaKlineSinkError(
      'QF_FENCED',
      `kafka: the transaction was not ${what}: this worker may no longer write its series (its lease lapsed)`,
    );
  }

  #ended(): void {
    this.#open = false;
    this.#kept = [];
    this.#broken = false;
    this.#replaced = false;
    this.#unanswered = false;
  }

  /** One step of an attempt; none starts once the transaction is refused (an abandoned attempt stops there). */
  #step<T>(run: () => Promise<T>): Promise<T> {
    if (this.#refused.signal.aborted) return Promise.reject(new KafkaSinkClosedError());
    return run();
  }

  /**
   * Runs `attempt` until it succeeds, redoing it after transient failures, each attempt bounded by
   * what is left of `deliveryTimeoutMs`. None starts in its last quarter (at most `requestTimeoutMs`):
   * an attempt needs the time to reach the broker. Past the budget, a
   * {@link TransactionRetriesExhausted} naming the brokers, the attempts, the time and the last failure.
   */
  async #retrying(attempt: () => Promise<void>): Promise<void> {
    const { brokers, deliveryTimeoutMs, requestTimeoutMs, retryMaxDelayMs } = this.o;
    const startMs = monotonicClock.now();
    const leftMs = (): number =>
      Math.max(1, Math.round(deliveryTimeoutMs - (monotonicClock.now() - startMs)));
    let attempts = 0;
    try {
      await retryWithBudget(
        async (n) => {
          attempts = n;
          const left = leftMs();
          try {
            await withTimeout(
              attempt(),
              left,
              'deliveryTimeoutMs',
              `the ${left} ms left of deliveryTimeoutMs = ${deliveryTimeoutMs} ms`,
            );
          } catch (err) {
            this.#broken = true;
            throw err;
          }
        },
        {
          budgetMs: deliveryTimeoutMs - Math.min(deliveryTimeoutMs / 4, requestTimeoutMs),
          baseDelayMs: Math.min(100, retryMaxDelayMs),
          maxDelayMs: retryMaxDelayMs,
          retryable: (err) => isRetryableKafkaError(err),
          signal: this.#refused.signal,
          onRetry: (err, n, delayMs) => {
            this.#retries++;
            this.logger.warn?.('kafka.transaction-retry', {
              attempt: n,
              delayMs: Math.round(delayMs),
              brokers: brokers.join(','),
              message: err instanceof Error ? err.message : String(err),
            });
          },
        },
      );
    } catch (err) {
      if (this.#refused.signal.aborted || !isRetryableKafkaError(err) || attempts === 0) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      throw new TransactionRetriesExhausted(
        `no success on ${brokers.join(',')} in ${attempts} attempt${attempts === 1 ? '' : 's'} over ${Math.round(monotonicClock.now() - startMs)} ms (deliveryTimeoutMs = ${deliveryTimeoutMs} ms); the last failed with: ${reason}`,
        { cause: err },
      );
    }
  }
}
