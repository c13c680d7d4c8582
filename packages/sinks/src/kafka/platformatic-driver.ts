import type { Admin, Producer, ProducerOptions, Serializers } from '@platformatic/kafka';
import { platformaticKafka } from './internal/kafka-clients.js';
import { platformaticBackoff } from './internal/platformatic-backoff.js';
import { readCommittedTopic } from './internal/read-committed-topic.js';
import { platformaticSecurity } from './kafka-security.js';
import type { KafkaDriverOptions, KafkaTopicSpec } from './kafka-producer-driver.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
} from './kafka-transactional-driver.js';
import type { KafkaMessage } from './to-kafka-message.js';

/** Values are JSON text or (Avro, schema registry) bytes. */
type MessageValue = string | Buffer;
type StringProducer = Producer<string, MessageValue, string, string>;

let serializers: Serializers<string, MessageValue, string, string> | undefined;
function messageSerializers(): Serializers<string, MessageValue, string, string> {
  const { stringSerializer } = platformaticKafka();
  return (serializers ??= {
    key: stringSerializer,
    value: (v) => (typeof v === 'string' ? stringSerializer(v) : v),
    headerKey: stringSerializer,
    headerValue: stringSerializer,
  });
}
/** The library does not export its Transaction class by name. */
type Transaction = Awaited<ReturnType<StringProducer['beginTransaction']>>;

/**
 * The settings the sink's @platformatic/kafka producer uses, exported so the benchmark's baseline
 * uses exactly the same ones: idempotent (`acks=all`, one request in flight, retries until
 * acknowledged), Java-compatible murmur2 partitioning (the same partition per key as kafkajs and
 * the Java client), no topic auto-creation.
 *
 * With a `transactionalId` (transactional options): the library sends its `timeout` as the
 * transaction timeout of `InitProducerId`, so `timeout` is `transactionTimeoutMs` (it is otherwise
 * only the broker's wait for replicas in a produce request; `requestTimeout` still bounds every
 * request); and producer id and epoch start at -1, Kafka's "none", without which (2.12: 0 and 0)
 * the broker answers a restarted process's `InitProducerId` with `PRODUCER_FENCED` once its
 * transactional id has been used; retries start at 20 ms (see {@link platformaticBackoff}).
 */
export function platformaticProducerOptions(
  options: KafkaDriverOptions | KafkaTransactionalDriverOptions,
): ProducerOptions<string, MessageValue, string, string> {
  const transactional =
    'transactionalId' in options && options.transactionalId !== undefined
      ? {
          transactionalId: options.transactionalId,
          timeout: options.transactionTimeoutMs,
          producerId: -1n,
          producerEpoch: -1,
          retryDelay: platformaticBackoff(options.retryMaxDelayMs, 20),
        }
      : {};
  return {
    clientId: options.clientId,
    bootstrapBrokers: [...options.brokers],
    serializers: messageSerializers(),
    idempotent: true,
    acks: -1,
    compression: options.compression,
    partitioner: platformaticKafka().compatibilityPartitioner,
    autocreateTopics: false,
    connectTimeout: options.connectTimeoutMs,
    timeout: options.requestTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    retries: Number.MAX_SAFE_INTEGER,
    retryDelay: platformaticBackoff(options.retryMaxDelayMs),
    ...platformaticSecurity(options),
    ...transactional,
  };
}

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
