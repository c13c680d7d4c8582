/**
 * The kafkajs settings of the sink's driver. Internal: their types are kafkajs's, which the
 * package's public declarations must not name (kafkajs is an optional peer dependency). The
 * benchmark's raw-kafkajs baseline imports them from here, to run with exactly the same ones.
 */
import type {
  CompressionTypes as CompressionType,
  ITopicConfig,
  KafkaConfig,
  ProducerConfig,
  TopicMessages,
} from 'kafkajs';
import { InvalidOptionError } from '@quoteflow/core';
import { kafkajsLibrary } from './kafka-clients.js';
import { hasZstd, registerKafkajsCodecs } from './kafkajs-codecs.js';
import { kafkajsSecurity } from '../kafka-security.js';
import type { KafkaCompression, KafkaDriverOptions, KafkaTopicSpec } from '../kafka-producer-driver.js';
import type { KafkaTransactionalDriverOptions } from '../kafka-transactional-driver.js';
import type { KafkaMessage } from '../to-kafka-message.js';

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
