/**
 * The settings of the sink's @platformatic/kafka producer. Internal: their types are the
 * library's, which the package's public declarations must not name (it is an optional peer
 * dependency, and its declarations do not compile under `skipLibCheck: false`). The benchmark's
 * baseline imports them from here, to run with exactly the same ones.
 */
import type { ProducerOptions, Serializers } from '@platformatic/kafka';
import { platformaticKafka } from './kafka-clients.js';
import { platformaticBackoff } from './platformatic-backoff.js';
import { platformaticSecurity } from '../kafka-security.js';
import type { KafkaDriverOptions } from '../kafka-producer-driver.js';
import type { KafkaTransactionalDriverOptions } from '../kafka-transactional-driver.js';

/** Values are JSON text or (Avro, schema registry) bytes. */
export type MessageValue = string | Buffer;

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
