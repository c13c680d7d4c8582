import type { Admin, Producer } from '@platformatic/kafka';
import { platformaticKafka } from './internal/kafka-clients.js';
import { platformaticBackoff } from './internal/platformatic-backoff.js';
import { platformaticProducerOptions, type MessageValue } from './internal/platformatic-producer-options.js';
import { readCommittedTopic } from './internal/read-committed-topic.js';
import { platformaticSecurity } from './kafka-security.js';
import type { KafkaDriverOptions, KafkaTopicSpec } from './kafka-producer-driver.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
} from './kafka-transactional-driver.js';
import type { KafkaMessage } from './to-kafka-message.js';

type StringProducer = Producer<string, MessageValue, string, string>;
/** The library does not export its Transaction class by name. */
type Transaction = Awaited<ReturnType<StringProducer['beginTransaction']>>;

/**
 * The maintained alternative to kafkajs: @platformatic/kafka (pure TypeScript), idempotent with
 * `acks=all`, every compression codec built in, and the same key → partition mapping as kafkajs.
 * Given a `transactionalId`, it runs transactions (`producer.beginTransaction()`); it reads topics
 * back with {@link readCommittedTopic} (its own read_committed filter keeps some aborted records).
 */
export class PlatformaticKafkaDriver implements KafkaTransactionalDriver {
  readonly name = 'platformatic';
  readonly #options: KafkaDriverOptions | KafkaTransactionalDriverOptions;
  readonly #producer: StringProducer;
  readonly #transactionalId: string | undefined;
  #transaction: Transaction | undefined;
  #admin: Admin | undefined;
  #closed = false;

  constructor(options: KafkaDriverOptions | KafkaTransactionalDriverOptions) {
    this.#options = options;
    const { Producer } = platformaticKafka();
    this.#producer = new Producer(platformaticProducerOptions(options));
    this.#transactionalId = 'transactionalId' in options ? options.transactionalId : undefined;
  }

  async connect(): Promise<void> {
    // Fetches the broker's API versions and the producer id up front, so connection problems show
    // here rather than on the first batch. With a transactional id, the library sends
    // InitProducerId on its first transaction; ending it locally (cancel) sends nothing.
    if (this.#transactionalId === undefined) await this.#producer.initIdempotentProducer({});
    else await initTransactions(this.#producer);
  }

  async begin(): Promise<void> {
    if (this.#transactionalId === undefined)
      throw new Error('platformatic: begin() without a transactionalId');
    this.#transaction = await this.#producer.beginTransaction();
  }

  async commit(): Promise<void> {
    const transaction = this.#transaction;
    if (transaction === undefined) throw new Error('platformatic: commit() without an open transaction');
    await transaction.commit();
    this.#transaction = undefined;
  }

  async abort(): Promise<void> {
    const transaction = this.#transaction;
    this.#transaction = undefined;
    if (transaction !== undefined && !transaction.completed) await transaction.abort();
  }

  async fence(transactionalIds: readonly string[]): Promise<void> {
    const transactionTimeoutMs =
      'transactionTimeoutMs' in this.#options ? this.#options.transactionTimeoutMs : 60_000;
    for (const transactionalId of transactionalIds) {
      const producer = new (platformaticKafka().Producer)(
        platformaticProducerOptions({ ...this.#options, transactionalId, transactionTimeoutMs }),
      );
      try {
        await initTransactions(producer);
      } finally {
        await producer.close(true);
      }
    }
  }

  readCommitted(topic: string, waitMs: number): Promise<KafkaCommittedRecord[]> {
    return readCommittedTopic(this.#options, topic, waitMs);
  }

  async ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void> {
    if (topics.length === 0) return;
    this.#admin ??= new (platformaticKafka().Admin)({
      clientId: this.#options.clientId,
      bootstrapBrokers: [...this.#options.brokers],
      connectTimeout: this.#options.connectTimeoutMs,
      timeout: this.#options.requestTimeoutMs,
      retries: 5,
      retryDelay: platformaticBackoff(this.#options.retryMaxDelayMs),
      ...platformaticSecurity(this.#options),
    });
    const admin = this.#admin;
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    // One request per set of topic configs: the library applies one set to every topic of a call.
    const byConfigs = new Map<string, KafkaTopicSpec[]>();
    for (const t of missing) {
      const key = JSON.stringify(Object.entries(t.configs ?? {}).sort());
      byConfigs.set(key, [...(byConfigs.get(key) ?? []), t]);
    }
    try {
      for (const group of byConfigs.values()) {
        await admin.createTopics({
          topics: group.map((t) => ({
            topic: t.topic,
            partitions: t.partitions,
            replicas: t.replicationFactor,
          })),
          configs: Object.entries(group[0]?.configs ?? {}).map(([name, value]) => ({ name, value })),
        });
      }
    } catch (err) {
      // Another producer may have created them meanwhile; only a topic still missing is an error.
      const now = new Set(await admin.listTopics());
      if (missing.some((t) => !now.has(t.topic))) throw err;
    }
  }

  async send(messages: readonly KafkaMessage[]): Promise<void> {
    const batch = { messages: messages.map((m) => ({ topic: m.topic, key: m.key, value: m.value })) };
    if (this.#transaction === undefined) await this.#producer.send(batch);
    else await this.#transaction.send(batch);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#admin?.close(), this.#producer.close(true)]);
  }
}

/** Sends InitProducerId with the producer's transactional id (fencing its earlier holders). */
async function initTransactions(producer: StringProducer): Promise<void> {
  await (await producer.beginTransaction()).cancel();
}
