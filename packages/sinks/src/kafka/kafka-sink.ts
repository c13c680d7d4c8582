import { InvalidOptionError, QuoteflowError, type QuoteflowLogger } from '@quoteflow/core';
import { KafkaDeliveryError } from './kafka-delivery-error.js';
import { describeKafkaFailure } from './kafka-failure.js';
import { resolveKafkaSecurity, type KafkaSaslOptions, type KafkaTlsOptions } from './kafka-security.js';
import {
  KAFKA_COMPRESSIONS,
  type KafkaCompression,
  type KafkaDriverOptions,
  type KafkaProducerDriver,
} from './kafka-producer-driver.js';
import { KafkaSinkClosedError } from './kafka-sink-closed-error.js';
import { KafkajsDriver } from './kafkajs-driver.js';
import { firstConnect } from './internal/first-connect.js';
import { OperationTimeout } from './internal/with-timeout.js';
import { PlatformaticKafkaDriver } from './platformatic-driver.js';
import {
  DEFAULT_TOPIC_PREFIX,
  JSON_VALUE_SERIALIZER,
  toKafkaMessage,
  type KafkaMessage,
  type KafkaRecord,
  type KafkaValueSerializer,
} from './to-kafka-message.js';

/** The built-in producer drivers. */
export const KAFKA_DRIVERS = ['kafkajs', 'platformatic'] as const;
export type KafkaDriverName = (typeof KAFKA_DRIVERS)[number];

/** Builds a producer driver; lets a caller bring its own client (or a test double). */
export type KafkaDriverFactory = (options: KafkaDriverOptions) => KafkaProducerDriver;

/** Where the sink reports what it does (core's logger shape); silent by default. */
export type KafkaSinkLogger = QuoteflowLogger;

/** Options of {@link KafkaSink}; see {@link KAFKA_SINK_DEFAULTS} for the defaults. */
export interface KafkaSinkOptions {
  /** Bootstrap brokers: `host:port`, several comma-separated or as an array. */
  readonly brokers: string | readonly string[];
  /** `kafkajs` (default), `platformatic` (@platformatic/kafka), or a factory of your own. */
  readonly driver?: KafkaDriverName | KafkaDriverFactory;
  /** Topics are `<topicPrefix>.kline`, `.depth` and `.suspension`. */
  readonly topicPrefix?: string;
  readonly clientId?: string;
  /** Record batch compression: `none`, `gzip`, `snappy`, `lz4`, `zstd` (zstd needs Node ≥ 22.15). */
  readonly compression?: KafkaCompression;
  /** How long a record may wait for more to fill its batch while nothing is in flight, ms. */
  readonly lingerMs?: number;
  /** Most records in one produce request. */
  readonly maxBatchRecords?: number;
  /** Most key + value bytes in one produce request (keep below the broker's `message.max.bytes`). */
  readonly maxBatchBytes?: number;
  /** Most records written but not yet acknowledged; `write()` waits while this many are. */
  readonly maxInFlightRecords?: number;
  /** Create a topic that does not exist before the first record goes to it. */
  readonly createTopics?: boolean;
  /** Partitions of a created topic; `-1` = the broker's `num.partitions`. */
  readonly partitions?: number;
  /** Replication factor of a created topic; `-1` = the broker's `default.replication.factor`. */
  readonly replicationFactor?: number;
  /** Topic configs of a created topic (`{'min.insync.replicas': '2'}`); the broker's defaults otherwise. */
  readonly topicConfigs?: Readonly<Record<string, string>>;
  /** TLS to the brokers (`true`: Node's CAs, hostname checked); plaintext by default. */
  readonly tls?: KafkaTlsOptions | boolean;
  /** SASL login (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); none by default. */
  readonly sasl?: KafkaSaslOptions;
  /** How long the broker may take to answer one produce request, ms. */
  readonly requestTimeoutMs?: number;
  /** How long a batch may go unacknowledged (retries included) before the sink gives up, ms. */
  readonly deliveryTimeoutMs?: number;
  /** Longest pause between two retries of a failed request, ms. */
  readonly retryMaxDelayMs?: number;
  /** TCP connect timeout, ms. */
  readonly connectTimeoutMs?: number;
  /**
   * How record values are written: the contract's JSON by default; Avro in the Confluent wire
   * format with a `SchemaRegistrySerializer` (opened first: it registers the schemas).
   */
  readonly valueSerializer?: KafkaValueSerializer;
  /**
   * How long the sink's first connection to the cluster may take, ms: past it the sink fails,
   * naming the brokers and what a TCP connection to each meets (`connect ECONNREFUSED …`), instead
   * of retrying silently for `deliveryTimeoutMs`. Later reconnects are bounded by `deliveryTimeoutMs`.
   */
  readonly firstConnectTimeoutMs?: number;
  readonly logger?: KafkaSinkLogger;
}

/** Defaults of {@link KafkaSinkOptions}, units in the names. */
export const KAFKA_SINK_DEFAULTS = {
  driver: 'kafkajs',
  topicPrefix: DEFAULT_TOPIC_PREFIX,
  clientId: 'quoteflow',
  compression: 'gzip',
  lingerMs: 5,
  maxBatchRecords: 2_000,
  maxBatchBytes: 900_000,
  maxInFlightRecords: 20_000,
  createTopics: true,
  partitions: -1,
  replicationFactor: -1,
  topicConfigs: {},
  tls: false,
  requestTimeoutMs: 30_000,
  deliveryTimeoutMs: 120_000,
  retryMaxDelayMs: 2_000,
  connectTimeoutMs: 10_000,
  firstConnectTimeoutMs: 30_000,
} as const satisfies Omit<Required<KafkaSinkOptions>, 'brokers' | 'logger' | 'sasl' | 'valueSerializer'>;

/** Counters of a sink, for monitoring and tests. */
export interface KafkaSinkStats {
  /** Records accepted by `write()`. */
  readonly written: number;
  /** Records the broker acknowledged. */
  readonly acknowledged: number;
  /** Records written and not yet acknowledged (never above `maxInFlightRecords`). */
  readonly outstanding: number;
  /** The highest `outstanding` seen. */
  readonly maxOutstanding: number;
  /** Produce requests acknowledged. */
  readonly batches: number;
  /** Records that will not be delivered (the sink failed). */
  readonly undelivered: number;
}

/** One produce request's worth of records; every write in it shares its promise. */
interface Batch {
  readonly messages: KafkaMessage[];
  bytes: number;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { messages: [], bytes: 0, done, resolve, reject };
}

const RECORD_OVERHEAD_BYTES = 32;

/**
 * Produces quoteflow records to Kafka (topics, keys and JSON values as `shared/spec/contract.md`
 * says) through an idempotent producer with `acks=all`.
 *
 * Records are batched (up to `maxBatchRecords` / `maxBatchBytes`, or after `lingerMs`) and sent
 * one request at a time, so records of one key keep their order. `write()` resolves only once the
 * broker acknowledged the record, and while `maxInFlightRecords` records are unacknowledged it
 * waits before accepting more: the sink slows its writer instead of buffering without limit.
 * The first batch to a topic creates the topic if it is missing.
 *
 * When a batch fails (the driver gave up, or `deliveryTimeoutMs` passed) the sink stops: that
 * write and every later one reject with a {@link KafkaDeliveryError} listing the records not
 * delivered. `close()` flushes everything pending, disconnects, and rejects with the list of all
 * undelivered records if there are any.
 *
 * @example
 * ```ts
 * await using sink = new KafkaSink({ brokers: '127.0.0.1:9092', topicPrefix: 'md' });
 * await sink.write(barUpdate); // resolved: on the broker
 * bars$.pipe(toKafka(sink)).subscribe(); // or as an RxJS operator
 * ```
 */
export class KafkaSink implements AsyncDisposable {
  readonly #o: Required<
    Omit<KafkaSinkOptions, 'logger' | 'brokers' | 'driver' | 'sasl' | 'tls' | 'valueSerializer'>
  >;
  readonly #serializer: KafkaValueSerializer;
  readonly #driverOptions: KafkaDriverOptions;
  readonly #factory: KafkaDriverFactory;
  readonly #logger: KafkaSinkLogger;
  #driver: KafkaProducerDriver | undefined;
  #everConnected = false;
  #connected: Promise<void> | undefined;
  readonly #knownTopics = new Set<string>();

  /** The batch being filled, then full batches waiting for their turn, oldest first. */
  #open: Batch | undefined;
  #ready: Batch[] = [];
  #inFlight = false;
  #outstanding = 0;
  // Writers waiting for a slot, oldest at #waitersHead (an index, not shift(): shift is O(n)).
  #capacityWaiters: ((() => void) | undefined)[] = [];
  #waitersHead = 0;
  #idleWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  #linger: NodeJS.Timeout | undefined;

  #failure: KafkaDeliveryError | undefined;
  /** Why the sink stopped (the first failure), for every later error. */
  #failureReason = '';
  #undelivered: KafkaMessage[] = [];
  #closing: Promise<void> | undefined;

  #written = 0;
  #acknowledged = 0;
  #maxOutstanding = 0;
  #batches = 0;

  constructor(options: KafkaSinkOptions) {
    const o = { ...KAFKA_SINK_DEFAULTS, ...definedOnly(options) };
    const brokers = (typeof o.brokers === 'string' ? o.brokers.split(',') : [...o.brokers])
      .map((b) => b.trim())
      .filter(Boolean);
    if (brokers.length === 0 || brokers.some((b) => !/^[^\s:]+:\d+$/.test(b))) {
      throw new InvalidOptionError(
        'brokers',
        `kafka: "brokers" must be host:port[,host:port…], got ${JSON.stringify(options.brokers)}`,
      );
    }
    if (!(KAFKA_COMPRESSIONS as readonly string[]).includes(o.compression)) {
      throw new InvalidOptionError(
        'compression',
        `kafka: "compression" must be one of ${KAFKA_COMPRESSIONS.join(', ')}, got ${JSON.stringify(o.compression)}`,
      );
    }
    if (typeof o.topicPrefix !== 'string' || !/^[A-Za-z0-9._-]+$/.test(o.topicPrefix)) {
      throw new InvalidOptionError(
        'topicPrefix',
        `kafka: "topicPrefix" must be letters, digits, '.', '_' or '-', got ${JSON.stringify(o.topicPrefix)}`,
      );
    }
    checkInt('lingerMs', o.lingerMs, 0);
    checkInt('maxBatchRecords', o.maxBatchRecords, 1);
    checkInt('maxBatchBytes', o.maxBatchBytes, 1);
    checkInt('maxInFlightRecords', o.maxInFlightRecords, 1);
    checkInt('requestTimeoutMs', o.requestTimeoutMs, 1);
    checkInt('deliveryTimeoutMs', o.deliveryTimeoutMs, 1);
    checkInt('retryMaxDelayMs', o.retryMaxDelayMs, 1);
    checkInt('connectTimeoutMs', o.connectTimeoutMs, 1);
    checkInt('firstConnectTimeoutMs', o.firstConnectTimeoutMs, 1);
    if (o.partitions !== -1) checkInt('partitions', o.partitions, 1);
    if (o.replicationFactor !== -1) checkInt('replicationFactor', o.replicationFactor, 1);
    checkTopicConfigs(o.topicConfigs);
    const security = resolveKafkaSecurity(o.tls, o.sasl);
    if (o.driver === 'kafkajs') this.#factory = (d) => new KafkajsDriver(d);
    else if (o.driver === 'platformatic') this.#factory = (d) => new PlatformaticKafkaDriver(d);
    else if (typeof o.driver === 'function') this.#factory = o.driver;
    else
      throw new InvalidOptionError(
        'driver',
        `kafka: "driver" must be ${KAFKA_DRIVERS.join(' or ')} or a factory, got ${JSON.stringify(o.driver)}`,
      );
    this.#o = o;
    this.#serializer = options.valueSerializer ?? JSON_VALUE_SERIALIZER;
    this.#logger = options.logger ?? {};
    this.#driverOptions = {
      brokers,
      clientId: o.clientId,
      compression: o.compression,
      requestTimeoutMs: o.requestTimeoutMs,
      retryMaxDelayMs: o.retryMaxDelayMs,
      connectTimeoutMs: o.connectTimeoutMs,
      deliveryTimeoutMs: o.deliveryTimeoutMs,
      ...security,
    };
    // Build the driver now, so a bad option of the driver (zstd on an old Node) throws here.
    this.#driver = this.#factory(this.#driverOptions);
  }

  /** The topic prefix in use. */
  get topicPrefix(): string {
    return this.#o.topicPrefix;
  }

  /** The driver's name (`kafkajs`, `platformatic`, …). */
  get driverName(): string {
    return this.#driver?.name ?? 'closed';
  }

  /** Counters since the sink was made. */
  stats(): KafkaSinkStats {
    return {
      written: this.#written,
      acknowledged: this.#acknowledged,
      outstanding: this.#outstanding,
      maxOutstanding: this.#maxOutstanding,
      batches: this.#batches,
      undelivered: this.#undelivered.length,
    };
  }

  /** Every record not delivered so far (empty while all goes well). */
  get undelivered(): readonly KafkaMessage[] {
    return this.#undelivered;
  }

  /**
   * Connects now (otherwise the first batch does). Rejects when the cluster cannot be reached.
   */
  connect(): Promise<void> {
    return this.#ensureConnected();
  }

  /**
   * Writes one record; resolves once the broker acknowledged it. Waits first while
   * `maxInFlightRecords` records are unacknowledged. Rejects with a {@link KafkaDeliveryError}
   * when it was not delivered, with a {@link KafkaSinkClosedError} after `close()`.
   */
  write(record: KafkaRecord): Promise<void> {
    let message: KafkaMessage;
    try {
      message = toKafkaMessage(record, this.#o.topicPrefix, this.#serializer);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.writeMessage(message);
  }

  /** Like {@link KafkaSink.write} for a message already mapped (`toKafkaMessage`). */
  writeMessage(message: KafkaMessage): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(new KafkaSinkClosedError());
    if (this.#failure !== undefined) return Promise.reject(this.#refuse(message));
    if (
      this.#outstanding < this.#o.maxInFlightRecords &&
      this.#waitersHead === this.#capacityWaiters.length
    ) {
      this.#outstanding++;
      return this.#enqueue(message);
    }
    // Full: wait for a slot. A woken writer finds its slot already reserved (FIFO, no overtaking).
    return new Promise<void>((resolve) => this.#capacityWaiters.push(resolve)).then(() => {
      if (this.#failure !== undefined) {
        this.#outstanding--;
        this.#maybeIdle();
        throw this.#refuse(message);
      }
      return this.#enqueue(message);
    });
  }

  /**
   * Sends what is batched now (without waiting for `lingerMs`) and resolves once every record
   * written so far is acknowledged; rejects with a {@link KafkaDeliveryError} if any was not.
   */
  flush(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failureSummary());
    if (this.#outstanding === 0) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.#idleWaiters.push({ resolve, reject }));
    this.#pump();
    return done;
  }

  /**
   * Flushes, then disconnects. Resolves when every record written was delivered; otherwise
   * rejects with a {@link KafkaDeliveryError} listing all that were not. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    let flushError: unknown;
    await this.flush().catch((err: unknown) => {
      flushError = err;
    });
    const driver = this.#driver;
    this.#driver = undefined;
    await driver?.close();
    if (this.#undelivered.length > 0) throw this.#failureSummary(flushError);
  }

  #enqueue(message: KafkaMessage): Promise<void> {
    this.#written++;
    if (this.#outstanding > this.#maxOutstanding) this.#maxOutstanding = this.#outstanding;
    const bytes = message.key.length + message.value.length + RECORD_OVERHEAD_BYTES;
    let batch = this.#open;
    if (batch !== undefined && batch.messages.length > 0 && batch.bytes + bytes > this.#o.maxBatchBytes) {
      this.#ready.push(batch);
      batch = undefined;
    }
    if (batch === undefined) this.#open = batch = newBatch();
    batch.messages.push(message);
    batch.bytes += bytes;
    if (batch.messages.length >= this.#o.maxBatchRecords || batch.bytes >= this.#o.maxBatchBytes) {
      this.#ready.push(batch);
      this.#open = undefined;
      this.#pump();
    } else if (this.#o.lingerMs === 0 || this.#ready.length > 0) {
      this.#pump();
    } else if (this.#linger === undefined && !this.#inFlight) {
      this.#linger = setTimeout(() => {
        this.#linger = undefined;
        this.#pump();
      }, this.#o.lingerMs);
    }
    return batch.done;
  }

  /** Sends the next batch (a full one, else the one being filled) unless one is in flight. */
  #pump(): void {
    if (this.#inFlight || this.#failure !== undefined) return;
    let batch = this.#ready.shift();
    if (batch === undefined) {
      batch = this.#open;
      this.#open = undefined;
    }
    if (batch === undefined) return;
    if (this.#linger !== undefined) {
      clearTimeout(this.#linger);
      this.#linger = undefined;
    }
    this.#inFlight = true;
    void this.#send(batch);
  }

  async #send(batch: Batch): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new DeliveryTimeout(
                `no acknowledgement within deliveryTimeoutMs = ${this.#o.deliveryTimeoutMs} ms`,
              ),
            ),
          this.#o.deliveryTimeoutMs,
        );
      });
      await Promise.race([this.#deliver(batch.messages), timeout]);
    } catch (err) {
      this.#fail(batch, err);
      return;
    } finally {
      clearTimeout(timer);
    }
    this.#inFlight = false;
    this.#batches++;
    this.#acknowledged += batch.messages.length;
    batch.resolve();
    this.#release(batch.messages.length);
    // What queued up while this batch was in flight has waited long enough: send it right away.
    this.#pump();
    this.#maybeIdle();
  }

  async #deliver(messages: KafkaMessage[]): Promise<void> {
    await this.#ensureConnected();
    const driver = this.#driver;
    if (driver === undefined) throw new KafkaSinkClosedError();
    if (this.#o.createTopics) {
      const fresh = [...new Set(messages.map((m) => m.topic))].filter((t) => !this.#knownTopics.has(t));
      if (fresh.length > 0) {
        await driver.ensureTopics(
          fresh.map((topic) => ({
            topic,
            partitions: this.#o.partitions,
            replicationFactor: this.#o.replicationFactor,
            ...(Object.keys(this.#o.topicConfigs).length === 0 ? {} : { configs: this.#o.topicConfigs }),
          })),
        );
        for (const t of fresh) this.#knownTopics.add(t);
        this.#logger.debug?.('kafka.topics', { topics: fresh });
      }
    }
    await driver.send(messages);
  }

  #ensureConnected(): Promise<void> {
    if (this.#connected === undefined) {
      const driver = this.#driver;
      if (driver === undefined) return Promise.reject(new KafkaSinkClosedError());
      // Until it has once connected, a sink is bounded by firstConnectTimeoutMs and says why.
      this.#connected = this.#everConnected
        ? driver.connect()
        : firstConnect(driver.connect(), this.#driverOptions.brokers, this.#o.firstConnectTimeoutMs).then(
            () => {
              this.#everConnected = true;
            },
          );
      // A failed connect is retried by the next batch (if the sink has not failed by then).
      this.#connected.catch(() => {
        this.#connected = undefined;
      });
    }
    return this.#connected;
  }

  /** Frees `n` slots and hands them to waiting writers, oldest first. */
  #release(n: number): void {
    this.#outstanding -= n;
    const waiters = this.#capacityWaiters;
    while (this.#waitersHead < waiters.length && this.#outstanding < this.#o.maxInFlightRecords) {
      this.#outstanding++;
      const wake = waiters[this.#waitersHead]!;
      waiters[this.#waitersHead++] = undefined;
      wake();
    }
    if (this.#waitersHead === waiters.length) {
      this.#capacityWaiters = [];
      this.#waitersHead = 0;
    } else if (this.#waitersHead > 4096 && this.#waitersHead * 2 > waiters.length) {
      this.#capacityWaiters = waiters.slice(this.#waitersHead);
      this.#waitersHead = 0;
    }
  }

  #maybeIdle(): void {
    if (this.#outstanding !== 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    if (this.#failure !== undefined) {
      const err = this.#failureSummary();
      for (const w of waiters) w.reject(err);
    } else {
      for (const w of waiters) w.resolve();
    }
  }

  /** The batch failed: the sink stops; every pending record is rejected and listed. */
  #fail(failed: Batch, cause: unknown): void {
    const lost = [failed, ...this.#ready, ...(this.#open === undefined ? [] : [this.#open])];
    this.#ready = [];
    this.#open = undefined;
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    this.#linger = undefined;
    const messages = lost.flatMap((b) => b.messages);
    const message = cause instanceof Error ? cause.message : String(cause);
    const described = describeKafkaFailure(cause, {
      brokers: this.#driverOptions.brokers,
      security: this.#driverOptions,
      topics: [...new Set(failed.messages.map((m) => m.topic))],
    });
    const reason =
      cause instanceof DeliveryTimeout || cause instanceof OperationTimeout
        ? message
        : `${this.#driver?.name ?? 'driver'} gave up: ${described ?? message}`;
    const error = new KafkaDeliveryError(messages, reason, cause);
    this.#failure = error;
    this.#failureReason = reason;
    for (const m of messages) this.#undelivered.push(m);
    this.#logger.warn?.('kafka.delivery-failed', { records: messages.length, reason });
    for (const b of lost) b.reject(error);
    this.#inFlight = false;
    // Writers waiting for a slot wake up, see the failure and reject.
    this.#release(messages.length);
    this.#maybeIdle();
  }

  /** The error for a record refused because the sink failed earlier; the record counts as undelivered. */
  #refuse(message: KafkaMessage): KafkaDeliveryError {
    this.#undelivered.push(message);
    return new KafkaDeliveryError(
      [message],
      `the sink stopped after an earlier failure (${this.#failureReason})`,
      this.#failure,
    );
  }

  #failureSummary(cause?: unknown): KafkaDeliveryError {
    return new KafkaDeliveryError([...this.#undelivered], this.#failureReason, cause ?? this.#failure?.cause);
  }
}

/** A batch's acknowledgement did not come in time (`QF_TIMEOUT`; the cause of the delivery error it leads to). */
class DeliveryTimeout extends QuoteflowError {
  constructor(message: string) {
    super('QF_TIMEOUT', message, { retryable: true });
  }
}

function checkInt(name: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(
      name,
      `kafka: "${name}" must be an integer >= ${min}, got ${JSON.stringify(value)}`,
    );
  }
}

/** Topic configs are name → string value (`cleanup.policy: compact`), as Kafka takes them. */
export function checkTopicConfigs(configs: unknown, option = 'topicConfigs'): void {
  if (
    typeof configs !== 'object' ||
    configs === null ||
    Array.isArray(configs) ||
    Object.entries(configs).some(([k, v]) => !/^[a-z0-9._-]+$/.test(k) || typeof v !== 'string')
  )
    throw new InvalidOptionError(
      option,
      `kafka: "${option}" must map topic config names (cleanup.policy, min.insync.replicas, …) to string values`,
    );
}

function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
