import type {
  Admin,
  CompressionTypes as CompressionType,
  ITopicConfig,
  Kafka,
  KafkaConfig,
  Producer,
  ProducerConfig,
  TopicMessages,
  Transaction,
} from 'kafkajs';
import { kafkajsLibrary } from './internal/kafka-clients.js';
import { registerKafkajsCodecs, hasZstd } from './internal/kafkajs-codecs.js';
import { readCommittedTopic } from './internal/read-committed-topic.js';
import { kafkajsSecurity } from './kafka-security.js';
import type { KafkaCompression, KafkaDriverOptions, KafkaTopicSpec } from './kafka-producer-driver.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
} from './kafka-transactional-driver.js';
import type { KafkaMessage } from './to-kafka-message.js';
import { InvalidOptionError, retryWithBudget } from '@quoteflow/core';

const COMPRESSION_NAMES = {
  none: 'None',
  gzip: 'GZIP',
  snappy: 'Snappy',
  lz4: 'LZ4',
  zstd: 'ZSTD',
} as const satisfies Record<KafkaCompression, keyof typeof CompressionType>;

/**
 * The kafkajs settings the sink uses, exported so the benchmark's raw-kafkajs baseline runs with
 * exactly the same ones: idempotent producer (`acks=all`, one request in flight per broker,
 * retries until acknowledged), no topic auto-creation, silent logs.
 */
export function kafkajsClientConfig(options: KafkaDriverOptions): KafkaConfig {
  return {
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: options.connectTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    logLevel: kafkajsLibrary().logLevel.NOTHING,
    ...kafkajsSecurity(options),
    // The cluster's retries decide how long a reconnect may take: long enough to span the whole
    // delivery timeout, so a restarting broker does not make kafkajs give up on a batch.
    retry: {
      retries: Math.ceil(options.deliveryTimeoutMs / options.retryMaxDelayMs) + 10,
      initialRetryTime: 100,
      maxRetryTime: options.retryMaxDelayMs,
    },
  };
}

/**
 * See {@link kafkajsClientConfig}. With a `transactionalId` (transactional options), the producer
 * runs transactions with the given `transactionTimeoutMs`.
 */
export function kafkajsProducerConfig(
  options: KafkaDriverOptions | KafkaTransactionalDriverOptions,
): ProducerConfig {
  const transactionalId = 'transactionalId' in options ? options.transactionalId : undefined;
  const transactional =
    transactionalId !== undefined && 'transactionTimeoutMs' in options
      ? { transactionalId, transactionTimeout: options.transactionTimeoutMs }
      : {};
  return {
    ...transactional,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Idempotence needs retries without limit (kafkajs warns otherwise); the sink's
    // `deliveryTimeoutMs` bounds how long a batch may take instead.
    // A transaction's first request meets CONCURRENT_TRANSACTIONS while the broker still writes the
    // previous commit's markers (a few ms): retrying after 100 ms would stall every checkpoint, so
    // transactional producers start at 20 ms, as the Java client does for AddPartitionsToTxn.
    retry: {
      retries: Number.MAX_SAFE_INTEGER,
      initialRetryTime: transactionalId === undefined ? 100 : 20,
      maxRetryTime: options.retryMaxDelayMs,
    },
  };
}

/** The kafkajs compression type of a codec name (registers zstd/lz4/snappy on first use). */
export function kafkajsCompression(compression: KafkaCompression): CompressionType {
  if (compression !== 'none' && compression !== 'gzip') registerKafkajsCodecs();
  if (compression === 'zstd' && !hasZstd()) {
    throw new InvalidOptionError(
      'compression',
      `kafka: "compression" zstd needs Node >= 22.15 (node:zlib zstd), got Node ${process.versions.node}`,
    );
  }
  return kafkajsLibrary().CompressionTypes[COMPRESSION_NAMES[compression]];
}

/** kafkajs's `createTopics` entry of a topic spec. */
export function kafkajsNewTopic(t: KafkaTopicSpec): ITopicConfig {
  return {
    topic: t.topic,
    numPartitions: t.partitions,
    replicationFactor: t.replicationFactor,
    configEntries: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
  };
}

/** Groups a batch by topic, keeping the order of the messages of each topic. */
export function kafkajsTopicMessages(messages: readonly KafkaMessage[]): TopicMessages[] {
  const byTopic = new Map<string, { key: string; value: string | Buffer }[]>();
  for (const m of messages) {
    let list = byTopic.get(m.topic);
    if (list === undefined) byTopic.set(m.topic, (list = []));
    list.push({ key: m.key, value: m.value });
  }
  return [...byTopic].map(([topic, msgs]) => ({ topic, messages: msgs }));
}

/**
 * The default driver: kafkajs 2 with an idempotent producer, `acks=all`, the chosen compression
 * (gzip built in; zstd, lz4 and snappy registered by quoteflow) and Java-compatible murmur2
 * partitioning by key. Given a `transactionalId`, it runs transactions (kafkajs's
 * `producer.transaction()`); it reads topics back with {@link readCommittedTopic}.
 */
export class KafkajsDriver implements KafkaTransactionalDriver {
  readonly name = 'kafkajs';
  readonly #options: KafkaDriverOptions | KafkaTransactionalDriverOptions;
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #compression: CompressionType;
  readonly #transactionalId: string | undefined;
  readonly #transactionTimeoutMs: number;
  #transaction: Transaction | undefined;
  #admin: Admin | undefined;
  #closed = false;

  constructor(options: KafkaDriverOptions | KafkaTransactionalDriverOptions) {
    this.#options = options;
    this.#compression = kafkajsCompression(options.compression);
    const { Kafka } = kafkajsLibrary();
    this.#kafka = new Kafka(kafkajsClientConfig(options));
    this.#producer = this.#kafka.producer(kafkajsProducerConfig(options));
    this.#transactionalId = 'transactionalId' in options ? options.transactionalId : undefined;
    // Kafka's default `transaction.timeout.ms`, for the producers of fence() of a plain driver.
    this.#transactionTimeoutMs = 'transactionTimeoutMs' in options ? options.transactionTimeoutMs : 60_000;
  }

  async connect(): Promise<void> {
    await this.#producer.connect();
    // kafkajs sends InitProducerId with the transactional id on its first transaction(); a
    // transaction that sent nothing ends without a request.
    if (this.#transactionalId !== undefined) await (await this.#producer.transaction()).abort();
  }

  async begin(): Promise<void> {
    if (this.#transactionalId === undefined) throw new Error('kafkajs: begin() without a transactionalId');
    if (this.#transaction !== undefined) throw new Error('kafkajs: begin() while a transaction is open');
    this.#transaction = await this.#producer.transaction();
  }

  async commit(): Promise<void> {
    const transaction = this.#transaction;
    if (transaction === undefined) throw new Error('kafkajs: commit() without an open transaction');
    await transaction.commit();
    this.#transaction = undefined;
  }

  async abort(): Promise<void> {
    const transaction = this.#transaction;
    this.#transaction = undefined;
    if (transaction?.isActive() === true) await transaction.abort();
  }

  async fence(transactionalIds: readonly string[]): Promise<void> {
    for (const transactionalId of transactionalIds) {
      const producer = this.#kafka.producer(
        kafkajsProducerConfig({
          ...this.#options,
          transactionalId,
          transactionTimeoutMs: this.#transactionTimeoutMs,
        }),
      );
      try {
        await producer.connect();
        await (await producer.transaction()).abort();
      } finally {
        await producer.disconnect();
      }
    }
  }

  readCommitted(topic: string, waitMs: number): Promise<KafkaCommittedRecord[]> {
    return readCommittedTopic(this.#options, topic, waitMs);
  }

  async ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void> {
    if (topics.length === 0) return;
    if (this.#admin === undefined) {
      this.#admin = this.#kafka.admin();
      await this.#admin.connect();
    }
    const admin = this.#admin;
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    try {
      await admin.createTopics({
        waitForLeaders: false,
        timeout: this.#options.requestTimeoutMs,
        topics: missing.map(kafkajsNewTopic),
      });
    } catch (err) {
      // Another producer may have created them meanwhile; only a topic still missing is an error.
      const now = new Set(await admin.listTopics());
      if (missing.some((t) => !now.has(t.topic))) throw err;
    }
    // Wait until every partition has a leader. kafkajs's own wait gives up on the transient
    // "unknown topic" a KRaft broker answers right after creating it, so poll here.
    const names = missing.map((t) => t.topic);
    const leaderless = new Error('a partition has no leader yet');
    try {
      await retryWithBudget(
        async () => {
          const meta = await admin.fetchTopicMetadata({ topics: names });
          if (!meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)))
            throw leaderless;
        },
        {
          budgetMs: this.#options.requestTimeoutMs,
          baseDelayMs: 100,
          maxDelayMs: 100,
          jitter: 'none',
          retryable: (err) => err === leaderless || (err as { retriable?: boolean }).retriable === true,
        },
      );
    } catch (err) {
      if (err !== leaderless) throw err; // the producer's retries take a leaderless partition from here
    }
  }

  async send(messages: readonly KafkaMessage[]): Promise<void> {
    await (this.#transaction ?? this.#producer).sendBatch({
      acks: -1,
      timeout: this.#options.requestTimeoutMs,
      compression: this.#compression,
      topicMessages: kafkajsTopicMessages(messages),
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#admin?.disconnect(), this.#producer.disconnect()]);
  }
}
