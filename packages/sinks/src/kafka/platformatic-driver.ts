import {
  Admin,
  Producer,
  compatibilityPartitioner,
  stringSerializers,
  type ProducerOptions,
} from '@platformatic/kafka';
import type { KafkaDriverOptions, KafkaProducerDriver, KafkaTopicSpec } from './kafka-producer-driver.js';
import type { KafkaMessage } from './to-kafka-message.js';

/** Exponential back-off between retries: 100 ms doubling up to `maxMs`. */
const backoff = (maxMs: number) => (_client: unknown, _op: string, attempt: number) =>
  Math.min(maxMs, 100 * 2 ** Math.min(attempt - 1, 16));

/**
 * The settings the sink's @platformatic/kafka producer uses, exported so the benchmark's baseline
 * uses exactly the same ones: idempotent (`acks=all`, one request in flight, retries until
 * acknowledged), Java-compatible murmur2 partitioning (the same partition per key as kafkajs and
 * the Java client), no topic auto-creation.
 */
export function platformaticProducerOptions(
  options: KafkaDriverOptions,
): ProducerOptions<string, string, string, string> {
  return {
    clientId: options.clientId,
    bootstrapBrokers: [...options.brokers],
    serializers: stringSerializers,
    idempotent: true,
    acks: -1,
    compression: options.compression,
    partitioner: compatibilityPartitioner,
    autocreateTopics: false,
    connectTimeout: options.connectTimeoutMs,
    timeout: options.requestTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    retries: Number.MAX_SAFE_INTEGER,
    retryDelay: backoff(options.retryMaxDelayMs),
  };
}

/**
 * The maintained alternative to kafkajs: @platformatic/kafka (pure TypeScript), idempotent with
 * `acks=all`, every compression codec built in, and the same key → partition mapping as kafkajs.
 */
export class PlatformaticKafkaDriver implements KafkaProducerDriver {
  readonly name = 'platformatic';
  readonly #options: KafkaDriverOptions;
  readonly #producer: Producer<string, string, string, string>;
  #admin: Admin | undefined;
  #closed = false;

  constructor(options: KafkaDriverOptions) {
    this.#options = options;
    this.#producer = new Producer(platformaticProducerOptions(options));
  }

  async connect(): Promise<void> {
    // Fetches the broker's API versions and the producer id up front, so connection problems show
    // here rather than on the first batch.
    await this.#producer.initIdempotentProducer({});
  }

  async ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void> {
    if (topics.length === 0) return;
    this.#admin ??= new Admin({
      clientId: this.#options.clientId,
      bootstrapBrokers: [...this.#options.brokers],
      connectTimeout: this.#options.connectTimeoutMs,
      timeout: this.#options.requestTimeoutMs,
      retries: 5,
      retryDelay: backoff(this.#options.retryMaxDelayMs),
    });
    const existing = new Set(await this.#admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    try {
      await this.#admin.createTopics({
        topics: missing.map((t) => ({
          topic: t.topic,
          partitions: t.partitions,
          replicas: t.replicationFactor,
        })),
      });
    } catch (err) {
      // Another producer may have created them meanwhile; only a topic still missing is an error.
      const now = new Set(await this.#admin.listTopics());
      if (missing.some((t) => !now.has(t.topic))) throw err;
    }
  }

  async send(messages: readonly KafkaMessage[]): Promise<void> {
    await this.#producer.send({
      messages: messages.map((m) => ({ topic: m.topic, key: m.key, value: m.value })),
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#admin?.close(), this.#producer.close(true)]);
  }
}
