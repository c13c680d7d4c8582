import { type BarUpdate, type HistoryMarker, seriesKey } from '@quoteflow/core';
import type { CommittingSink, SinkCheckpoint } from '../committing-sink.js';
import type { SeriesWatermark } from '../files/dataset-log-format.js';
import { BufferedRecords } from './internal/buffered-records.js';
import { checkpointCommit } from './internal/commit-outcome.js';
import { HeldHistory } from './internal/held-history.js';
import { KlineTransaction } from './internal/kline-transaction.js';
import { withTimeout } from './internal/with-timeout.js';
import { PendingSeries } from './internal/pending-series.js';
import { transactionalDriverFactory } from './internal/transactional-driver-factory.js';
import {
  checkFencedIds,
  resolveKlineSinkOptions,
  type KafkaDelivery,
  type KafkaKlineSinkOptions,
  type ResolvedKlineSinkOptions,
} from './kafka-kline-sink-options.js';
import {
  KafkaKlineSinkError,
  klineSinkFailure,
  klineSinkOpenFailure,
  type KlineSinkFailureContext,
} from './kafka-kline-sink-error.js';
import type { KafkaDriverOptions, KafkaProducerDriver } from './kafka-producer-driver.js';
import { KafkaSink, type KafkaSinkLogger } from './kafka-sink.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverFactory,
} from './kafka-transactional-driver.js';
import { klineWatermarksOf } from './kline-watermark-record.js';
import {
  JSON_VALUE_SERIALIZER,
  toKafkaMessage,
  type KafkaMessage,
  type KafkaValueSerializer,
} from './to-kafka-message.js';
import type { KafkaKlineSinkStats } from './kafka-kline-sink-stats.js';

/**
 * The Kafka {@link CommittingSink} of K-line records: every update goes to `<topicPrefix>.kline`
 * as `toKafkaMessage` maps it (contract.md, "Kafka"), and each checkpoint commits.
 *
 * - `exactly-once` (the default): the records taken since the last checkpoint and, per series that
 *   gained, its new cumulative watermark (`<topicPrefix>.kline.watermarks`, compacted, key
 *   `CODE|K`) are one Kafka transaction. `open` initialises transactions with `transactionalId`
 *   (which aborts what a dead predecessor with that id left open and fences it) and reads the
 *   watermarks back as a `read_committed` consumer; `write` drops final bars they cover. After
 *   kill -9 at any moment, the reopened sink resumes from exactly what was committed, so a consumer
 *   reading with `isolation.level=read_committed` sees every final bar once.
 * - `at-least-once`: the idempotent producer; `checkpoint` waits for the acknowledgements;
 *   `watermarks()` is `undefined`; a final bar may repeat after a crash.
 *
 * Each key in time order: between a series' `begin` history marker and its end (`mark`, handed on by
 * `commitTo` from `klineUpdates`, which brackets each series' backfill with them) the series'
 * updates are held, not taken, and at the end taken oldest first, so a history read newest page
 * first reaches the topic as one ascending run, and a forming update never ahead of older finals.
 * Held updates are in no transaction and no watermark: after a crash the pipeline reads them again.
 * They are in memory until their series' history ends: at most what its backfill reads in the run.
 *
 * `write` never waits: records go out in batches (one request in flight), and more than
 * `maxBufferedRecords` unacknowledged stops the sink (`QF_BUFFER_OVERFLOW`; records released
 * from a hold do not count: the hold bounds them). Exactly once, a
 * transaction that meets a broker restart is redone with a new producer (the same transactional id)
 * for up to `deliveryTimeoutMs`, a commit without an answer decided from the watermark topic. A
 * failure (past that, fenced) is raised by the next `write`/`checkpoint`; the transaction is
 * aborted. Errors: {@link KafkaKlineSinkError}.
 *
 * @example
 * ```ts
 * await using sink = await KafkaKlineSink.open({
 *   brokers: '127.0.0.1:9092',
 *   topicPrefix: 'md',
 *   transactionalId: 'quoteflow-md-worker-1',
 * });
 * const from = sink.watermarks()?.get(seriesKey('AAPL.US', 1))?.last; // resume after it
 * for (const update of updates) sink.write(update);
 * await sink.checkpoint(); // committed: visible to read_committed consumers
 * ```
 */
export class KafkaKlineSink implements CommittingSink, AsyncDisposable {
  readonly name: string;
  readonly checkpointEveryMs: number;
  readonly delivery: KafkaDelivery;
  /** The producer's transactional id (`undefined` at least once). */
  readonly transactionalId: string | undefined;
  /** The compacted topic the watermarks are committed to. */
  readonly watermarkTopic: string;

  readonly #o: ResolvedKlineSinkOptions;
  readonly #exactlyOnce: boolean;
  readonly #factory: KafkaTransactionalDriverFactory;
  /** The lease check asked before each commit (the `fence` option). */
  readonly #mayWrite: () => boolean;
  readonly #logger: KafkaSinkLogger;
  readonly #serializer: KafkaValueSerializer;
  readonly #inner: KafkaSink;
  /** At least once: the driver; exactly once, the transaction's (it replaces it after a transient failure). */
  #plainDriver!: KafkaTransactionalDriver;
  #driverOptions!: KafkaDriverOptions;
  /** Exactly once: the transaction KafkaSink's batches go into. */
  #transaction: KlineTransaction | undefined;

  #committed = new Map<string, SeriesWatermark>();
  /** Taken since the last checkpoint began; `#sealed`: taken before it, while it commits. */
  #pending: PendingSeries;
  #sealed: PendingSeries | undefined;
  /** Records taken, not acknowledged; those taken while a checkpoint commits wait for the next one. */
  readonly #buffer: BufferedRecords;
  /** Updates of series whose history is open, held back for order (not taken yet). */
  readonly #history = new HeldHistory();
  #checkpointing: Promise<unknown> | undefined;
  #failure: KafkaKlineSinkError | undefined;
  #aborting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #closed = false;
  /** close() is past the running checkpoint: batches not sent yet are dropped, not sent. */
  #discarding = false;

  #dropped = 0;
  #forming = 0;
  #committedBars = 0;
  #checkpoints = 0;
  #lastCommitMs: number | undefined;

  private constructor(options: KafkaKlineSinkOptions, o: ResolvedKlineSinkOptions) {
    this.#o = o;
    this.delivery = o.delivery;
    this.transactionalId = o.transactionalId;
    this.watermarkTopic = o.watermarkTopic;
    this.checkpointEveryMs = o.checkpointEveryMs;
    this.#exactlyOnce = o.delivery === 'exactly-once';
    this.name = `kafka ${o.topicPrefix}.kline (${o.delivery})`;
    this.#factory = transactionalDriverFactory(options.driver);
    this.#mayWrite = options.fence ?? (() => true);
    this.#logger = options.logger ?? {};
    this.#serializer = options.valueSerializer ?? JSON_VALUE_SERIALIZER;
    this.#pending = new PendingSeries(this.#exactlyOnce);
    this.#buffer = new BufferedRecords(o.maxBufferedRecords);
    // KafkaSink checks the shared options and batches; its driver is ours (see #adopt).
    this.#inner = new KafkaSink({ ...options, createTopics: false, driver: (d) => this.#adopt(d) });
  }

  /**
   * Connects, creates the missing topics (`createTopics`), and, exactly once, initialises
   * transactions and reads the committed watermarks (waiting up to `watermarkReadTimeoutMs` for
   * transactions open on the watermark topic to end). Rejects with `InvalidOptionError` for a bad
   * option, a {@link KafkaKlineSinkError} otherwise: `QF_KAFKA_UNREACHABLE` (no connection,
   * transactions or topics) or `QF_KAFKA_WATERMARKS`.
   */
  static async open(options: KafkaKlineSinkOptions): Promise<KafkaKlineSink> {
    const sink = new KafkaKlineSink(options, resolveKlineSinkOptions(options));
    try {
      await sink.#open();
    } catch (err) {
      await sink.close();
      throw err;
    }
    return sink;
  }

  async #open(): Promise<void> {
    const { deliveryTimeoutMs } = this.#driverOptions;
    try {
      await withTimeout(this.#inner.connect(), deliveryTimeoutMs, 'deliveryTimeoutMs');
      if (this.#o.topics.length > 0) await this.#driver().ensureTopics(this.#o.topics);
    } catch (err) {
      throw klineSinkOpenFailure(err, this.#failureContext());
    }
    if (!this.#exactlyOnce) return;
    const fence = this.#o.fenceAtOpen.filter((id) => id !== this.transactionalId);
    if (fence.length > 0) await this.fence(fence);
    this.#committed = await this.#readWatermarks();
  }

  /**
   * Exactly once: per series (`CODE|K`), what the committed bars cover: read at `open`/`refresh`,
   * advanced by each checkpoint (a live view). At least once: `undefined`.
   */
  watermarks(): ReadonlyMap<string, SeriesWatermark> | undefined {
    return this.#exactlyOnce ? this.#committed : undefined;
  }

  /**
   * Takes one update without waiting, or holds it while its series' history is open (see
   * {@link KafkaKlineSink.mark}). Exactly once, a final bar its series' watermark covers or taken
   * since the last checkpoint is dropped. Throws the sink's failure (a {@link KafkaKlineSinkError}),
   * `QF_BUFFER_OVERFLOW` past `maxBufferedRecords`, `QF_CLOSED` after `close()`.
   */
  write(update: BarUpdate): void {
    this.#usable();
    if (!this.#history.hold(update)) this.#take(update, false);
  }

  /**
   * Takes a series' history marker: from `begin` its updates are held; at `complete` or
   * `cut-short` what was held is taken, oldest first (exactly once, minus what the watermarks
   * cover), as one ascending run. Throws like {@link KafkaKlineSink.write}.
   */
  mark(marker: HistoryMarker): void {
    this.#usable();
    const key = seriesKey(marker.code, marker.klineType);
    if (marker.phase === 'begin') this.#history.open(key);
    else for (const update of this.#history.release(key)) this.#take(update, true);
  }

  #take(update: BarUpdate, released: boolean): void {
    let message: KafkaMessage;
    if (update.final) {
      const key = seriesKey(update.code, update.klineType);
      if (this.#exactlyOnce && this.#holds(key, update.tsMs)) {
        this.#dropped++;
        return;
      }
      // Serialised first: a value the serializer refuses throws before the sink counts it.
      message = toKafkaMessage(update, this.#o.topicPrefix, this.#serializer);
      this.#reserve(released);
      this.#pending.take(key, update.tsMs);
    } else {
      message = toKafkaMessage(update, this.#o.topicPrefix, this.#serializer);
      this.#reserve(released);
      this.#forming++;
    }
    if (this.#exactlyOnce && this.#sealed !== undefined) this.#buffer.wait({ message, released });
    else this.#deliver(message, released);
  }

  /**
   * Exactly once: commits the records taken since the last checkpoint together with one watermark
   * record per series that gained, in one transaction; at least once: waits for their
   * acknowledgements. Checkpoints run one after the other; records taken meanwhile go to the next.
   * Rejects with the sink's failure (the transaction is then aborted).
   */
  checkpoint(): Promise<SinkCheckpoint> {
    if (this.#closed) return Promise.reject(this.#closedError());
    const previous = this.#checkpointing ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.#checkpoint());
    this.#checkpointing = run;
    return run;
  }

  /** Reads the watermark topic again (after the running checkpoint): other workers' commits too. */
  async refresh(): Promise<void> {
    this.#usable();
    await this.#checkpointing?.catch(() => undefined);
    if (this.#exactlyOnce) this.#committed = await this.#readWatermarks();
  }

  /**
   * Takes each of `transactionalIds` (other workers' sinks) away from its holder: its open
   * transaction is aborted now rather than after its timeout, and the holder, should it be alive
   * (paused, partitioned), fails its next commit with `QF_FENCED`. A worker taking over a dead
   * worker's series calls this with the dead worker's id, then {@link KafkaKlineSink.refresh}.
   */
  async fence(transactionalIds: readonly string[]): Promise<void> {
    if (this.#closed) throw this.#closedError();
    checkFencedIds(transactionalIds, this.transactionalId);
    try {
      await this.#driver().fence(transactionalIds);
    } catch (err) {
      throw new KafkaKlineSinkError(
        'QF_KAFKA_TRANSACTION',
        `kafka: could not fence transactional ids ${JSON.stringify(transactionalIds)} on ${this.#driverOptions.brokers.join(',')}: ${messageOf(err)}`,
        { retryable: true, cause: err },
      );
    }
  }

  /** Resolves once every record taken so far is acknowledged by the broker (not yet committed). */
  async flush(): Promise<void> {
    this.#usable();
    await this.#checkpointing?.catch(() => undefined);
    await this.#inner.flush().catch((err: unknown) => this.#fail(err));
    this.#usable();
  }

  /** Counters since the sink opened. */
  stats(): KafkaKlineSinkStats {
    return {
      taken: this.#committedBars + (this.#sealed?.bars ?? 0) + this.#pending.bars,
      dropped: this.#dropped,
      forming: this.#forming,
      committed: this.#committedBars,
      checkpoints: this.#checkpoints,
      buffered: this.#buffer.count,
      retries: this.#transaction?.retries ?? 0,
      lastCommitMs: this.#lastCommitMs,
      held: this.#history.size,
    };
  }

  /**
   * Waits for a running checkpoint, aborts the open transaction (what was taken since the last
   * checkpoint is not committed), disconnects. Idempotent; never rejects.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    this.#closed = true;
    // A checkpoint already running completes (or fails) first.
    await this.#checkpointing?.catch(() => undefined);
    this.#discarding = true;
    this.#transaction?.refuse();
    this.#history.clear();
    for (const t of this.#buffer.drainWaiting()) this.#buffer.settle(t.released);
    // Exactly once, batches not yet sent fail (the refused transaction); the one in flight ends first.
    await this.#inner.flush().catch(() => undefined);
    await this.#aborting;
    await this.#abort();
    await this.#inner.close().catch(() => undefined);
  }

  async #checkpoint(): Promise<SinkCheckpoint> {
    this.#throwIfFailed();
    const sealed = this.#pending;
    this.#pending = new PendingSeries(this.#exactlyOnce);
    this.#sealed = sealed;
    try {
      await this.#inner.flush().catch((err: unknown) => this.#fail(err));
      this.#throwIfFailed();
      const added = sealed.added();
      // Exactly once, every final bar taken went into the transaction: nothing pending, nothing added.
      if (this.#transaction?.pending === true) await this.#commit(this.#transaction, added);
      this.#checkpoints++;
      this.#committedBars += sealed.bars;
      return { sink: this.name, closedBars: sealed.bars, series: added, files: [] };
    } finally {
      this.#sealed = undefined;
      const waiting = this.#buffer.drainWaiting();
      const send = this.#failure === undefined && !this.#discarding;
      for (const t of waiting)
        if (send) this.#deliver(t.message, t.released);
        else this.#buffer.settle(t.released);
    }
  }

  /**
   * Produces the series' new watermarks into the open transaction and commits it (redone after a
   * transient failure; see KlineTransaction.commit); the watermarks advance once it committed.
   */
  async #commit(transaction: KlineTransaction, added: ReadonlyMap<string, SeriesWatermark>): Promise<void> {
    const t0 = performance.now();
    const sink = { transactionalId: this.transactionalId, committed: this.#committed };
    const c = checkpointCommit(this.watermarkTopic, sink, added, Date.now(), () =>
      this.#readWatermarkRecords(),
    );
    try {
      await transaction.commit(c.marks, c.outcome);
    } catch (err) {
      this.#fail(
        err,
        transaction.unanswered ? 'the commit got no answer: its outcome is unknown' : undefined,
      );
      this.#throwIfFailed();
    }
    for (const [key, mark] of c.after) this.#committed.set(key, mark);
    this.#lastCommitMs = performance.now() - t0;
  }

  /** Whether a final bar is committed (within its series' watermark) or taken since the last checkpoint. */
  #holds(key: string, tsMs: number): boolean {
    const w = this.#committed.get(key);
    if (w !== undefined && w.first <= tsMs && tsMs <= w.last) return true;
    return this.#sealed?.has(key, tsMs) === true || this.#pending.has(key, tsMs);
  }

  /** Counts a record taken; past `maxBufferedRecords` (released ones aside), the sink fails. */
  #reserve(released: boolean): void {
    if (!this.#buffer.reserve(released)) {
      this.#fail(
        new KafkaKlineSinkError(
          'QF_BUFFER_OVERFLOW',
          `${this.name}: more than maxBufferedRecords = ${this.#o.maxBufferedRecords} records taken and not acknowledged by the broker; await flush() or checkpoint() between writes, or raise maxBufferedRecords`,
        ),
      );
      this.#throwIfFailed();
    }
  }

  #deliver(message: KafkaMessage, released: boolean): void {
    this.#inner.writeMessage(message).then(
      () => this.#buffer.settle(released),
      (err: unknown) => {
        this.#buffer.settle(released);
        this.#fail(err);
      },
    );
  }

  /**
   * Builds the driver with the options KafkaSink checked; exactly once, KafkaSink's sends go
   * through a transaction, which builds a new driver (same options) whenever it redoes one.
   */
  #adopt(d: KafkaDriverOptions): KafkaProducerDriver {
    this.#driverOptions = d;
    const build = (): KafkaTransactionalDriver =>
      this.#factory({
        ...d,
        transactionalId: this.#o.transactionalId,
        transactionTimeoutMs: this.#o.transactionTimeoutMs,
      });
    if (!this.#exactlyOnce) return (this.#plainDriver = build());
    this.#transaction = new KlineTransaction(build, d, this.#logger, this.#mayWrite);
    return this.#transaction.producerDriver();
  }

  #driver(): KafkaTransactionalDriver {
    return this.#transaction?.driver ?? this.#plainDriver;
  }

  async #readWatermarks(): Promise<Map<string, SeriesWatermark>> {
    return klineWatermarksOf(this.watermarkTopic, await this.#readWatermarkRecords());
  }

  #readWatermarkRecords(): Promise<KafkaCommittedRecord[]> {
    return this.#driver().readCommitted(this.watermarkTopic, this.#o.watermarkReadTimeoutMs);
  }

  /** The sink stops: the first failure is kept (as a sink error) for every later call, and the transaction aborted. */
  #fail(cause: unknown, what?: string): void {
    // Once close() refuses the batches left, their failures are its own doing.
    if (this.#failure !== undefined || this.#discarding) return;
    const failure = klineSinkFailure(cause, this.#failureContext(), what);
    this.#failure = failure;
    this.#logger.warn?.('kafka.kline-sink-failed', { code: failure.code, message: failure.message });
    this.#transaction?.refuse();
    this.#aborting = this.#abort();
  }

  /** Aborts the open transaction, if any; a failure to abort leaves it to the broker's timeout. */
  async #abort(): Promise<void> {
    const err = await this.#transaction?.abort();
    if (err !== undefined) this.#logger.warn?.('kafka.abort-failed', { message: messageOf(err) });
  }

  /** For calls from outside: refused after close() or a failure. */
  #usable(): void {
    if (this.#closed) throw this.#closedError();
    this.#throwIfFailed();
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  #closedError(): KafkaKlineSinkError {
    return new KafkaKlineSinkError('QF_CLOSED', `${this.name} is closed; open a new sink`);
  }

  #failureContext(): KlineSinkFailureContext {
    return {
      name: this.name,
      exactlyOnce: this.#exactlyOnce,
      transactionalId: this.transactionalId,
      transactionTimeoutMs: this.#o.transactionTimeoutMs,
      brokers: this.#driverOptions.brokers,
      security: this.#driverOptions,
      topics: [`${this.#o.topicPrefix}.kline`, ...(this.#exactlyOnce ? [this.watermarkTopic] : [])],
    };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
