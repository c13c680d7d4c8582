/**
 * The small producer interface the Kafka sink talks to, so the client library behind it can be
 * swapped: kafkajs (the default) or @platformatic/kafka, or a test double.
 */
import type { KafkaSaslOptions, KafkaTlsOptions } from './kafka-security.js';
import type { KafkaMessage } from './to-kafka-message.js';

/** Compression codecs of a Kafka record batch. */
export const KAFKA_COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type KafkaCompression = (typeof KAFKA_COMPRESSIONS)[number];

/** A topic to create when it does not exist. */
export interface KafkaTopicSpec {
  readonly topic: string;
  /** Partitions of a new topic; `-1` = the broker's `num.partitions`. */
  readonly partitions: number;
  /** Replication factor of a new topic; `-1` = the broker's `default.replication.factor`. */
  readonly replicationFactor: number;
  /** Topic configs of a new topic (`cleanup.policy: 'compact'`); the broker's defaults otherwise. */
  readonly configs?: Readonly<Record<string, string>>;
}

/**
 * A Kafka producer as the sink uses it. Every driver is idempotent with `acks=all`, so a retry
 * inside the driver never stores a record twice, and a resolved `send` means every message of
 * the batch is on all in-sync replicas. The sink calls `send` for one batch at a time.
 */
export interface KafkaProducerDriver {
  /** A short name for logs and benchmarks (`kafkajs`, `platformatic`). */
  readonly name: string;
  /** Connects to the cluster; called once before anything else. */
  connect(): Promise<void>;
  /** Creates the topics that do not exist yet (an existing topic is left as it is). */
  ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void>;
  /**
   * Sends one batch; resolves once the broker acknowledged every message, rejects when the
   * driver gave up (then the delivery of each message of the batch is unknown). Messages with the
   * same key land on the same partition (Java-compatible murmur2), in order.
   */
  send(messages: readonly KafkaMessage[]): Promise<void>;
  /** Disconnects; idempotent. */
  close(): Promise<void>;
}

/** What every built-in driver takes. */
export interface KafkaDriverOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly compression: KafkaCompression;
  /** How long the broker may take to answer one produce request, ms. */
  readonly requestTimeoutMs: number;
  /** Longest pause between two retries of a failed request, ms (retries go on until acknowledged). */
  readonly retryMaxDelayMs: number;
  /** TCP connect timeout, ms. */
  readonly connectTimeoutMs: number;
  /** TLS to the brokers; plaintext when absent. */
  readonly tls?: KafkaTlsOptions | undefined;
  /** SASL login; none when absent. */
  readonly sasl?: KafkaSaslOptions | undefined;
  /**
   * How long the sink waits for a batch's acknowledgement, ms: drivers keep reconnecting and
   * retrying for at least this long before they give up (a broker restart must not fail a batch).
   */
  readonly deliveryTimeoutMs: number;
}
