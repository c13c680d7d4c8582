import type { Admin, CompressionTypes as CompressionType, Kafka, Producer, Transaction } from 'kafkajs';
import { kafkajsLibrary } from './internal/kafka-clients.js';
import {
  kafkajsClientConfig,
  kafkajsCompression,
  kafkajsNewTopic,
  kafkajsProducerConfig,
  kafkajsTopicMessages,
} from './internal/kafkajs-config.js';
import { readCommittedTopic } from './internal/read-committed-topic.js';
import type { KafkaDriverOptions, KafkaTopicSpec } from './kafka-producer-driver.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
} from './kafka-transactional-driver.js';
import type { KafkaMessage } from './to-kafka-message.js';
import { retryWithBudget } from '@quoteflow/core/internal';

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
