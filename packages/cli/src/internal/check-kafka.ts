import { QuoteflowError } from '@quoteflow/core';
import {
  FormatVersionError,
  type KafkaSinkOptions,
  type KafkaTopicKind,
  type KafkaTopicSpec,
  type KafkaValueSerializer,
} from '@quoteflow/sinks';
import { checkKafkaCluster, checkKlineWatermarksFormat, KafkaClusterError } from '@quoteflow/sinks/internal';
import { envSecondsMs } from './env-seconds.js';
import type { CliKafkaOptions } from './kafka-options.js';
import { openedSchemaRegistry, openSchemaRegistry } from './schema-registry-option.js';

export type { CliKafkaOptions } from './kafka-options.js';

/**
 * How long a batch may stay unacknowledged before the sink (and so the command) fails: the
 * contract's 30 s, not the library's patient default, so a broker that goes away during a run is
 * reported while the run is still being watched. `QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S` changes it.
 */
export const CLI_KAFKA_DELIVERY_TIMEOUT_MS = 30_000;

/** The sink options a CLI command's Kafka sink shares: brokers, prefix, login, topics, delivery bounded for operators. */
export type CliKafkaSinkOptions = Pick<
  KafkaSinkOptions,
  | 'brokers'
  | 'topicPrefix'
  | 'deliveryTimeoutMs'
  | 'clientId'
  | 'compression'
  | 'tls'
  | 'sasl'
  | 'createTopics'
  | 'partitions'
  | 'replicationFactor'
  | 'topicConfigs'
>;

/** The sink options of a CLI command: its brokers, prefix, TLS/SASL and topic settings, delivery bounded for operators. */
export function cliKafkaSinkOptions(
  kafka: CliKafkaOptions,
  env: Readonly<Record<string, string | undefined>>,
): CliKafkaSinkOptions & {
  brokers: string | readonly string[];
  topicPrefix: string;
  deliveryTimeoutMs: number;
  valueSerializer?: KafkaValueSerializer;
} {
  const deliveryTimeoutMs = envSecondsMs(
    env,
    'QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S',
    CLI_KAFKA_DELIVERY_TIMEOUT_MS / 1000,
  );
  return {
    brokers: kafka.brokers,
    topicPrefix: kafka.topicPrefix,
    deliveryTimeoutMs,
    createTopics: kafka.createTopics,
    ...(kafka.clientId === undefined ? {} : { clientId: kafka.clientId }),
    ...(kafka.compression === undefined ? {} : { compression: kafka.compression }),
    ...(kafka.tls === undefined ? {} : { tls: kafka.tls }),
    ...(kafka.sasl === undefined ? {} : { sasl: kafka.sasl }),
    ...(kafka.partitions === undefined ? {} : { partitions: kafka.partitions }),
    ...(kafka.replicationFactor === undefined ? {} : { replicationFactor: kafka.replicationFactor }),
    ...(kafka.topicConfigs === undefined ? {} : { topicConfigs: kafka.topicConfigs }),
    ...(kafka.schemaRegistry === undefined
      ? {}
      : { valueSerializer: openedSchemaRegistry(kafka.schemaRegistry, kafka.topicPrefix) }),
  };
}

/** The topic specs of `kinds` under the command's prefix, as its sinks create them. */
function topicSpecs(kafka: CliKafkaOptions, kinds: readonly KafkaTopicKind[]): KafkaTopicSpec[] {
  return kinds.map((kind) => ({
    topic: `${kafka.topicPrefix}.${kind}`,
    partitions: kafka.partitions ?? -1,
    replicationFactor: kafka.replicationFactor ?? -1,
    ...(kafka.topicConfigs === undefined ? {} : { configs: kafka.topicConfigs }),
  }));
}

/**
 * Checks the Kafka cluster before the command asks the service for anything or writes a file: it
 * answers, takes the login and certificates, and the topics of `options.topics` exist (created now
 * when `createTopics`). A refused login, an untrusted or misnamed certificate, a missing
 * permission or topic fails it at once (exit 1) naming the broker and what went wrong; a broker
 * that does not answer, after `timeoutMs`. SIGINT/SIGTERM during the wait fail it too. With
 * `watermarks`, a watermark topic holding a record of a newer quoteflow format is refused
 * (`FormatVersionError`, exit 2). With a schema registry, then gets the topics' schema ids
 * (registering them).
 */
export async function checkKafka(
  kafka: CliKafkaOptions,
  options: {
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
    readonly flag?: string;
    readonly topics?: readonly KafkaTopicKind[];
    /**
     * K-lines exactly once (or maybe): with topic creation off, `P.kline.watermarks` must exist
     * too (the sink creates it otherwise, compacted, one partition).
     */
    readonly watermarks?: boolean;
  },
): Promise<void> {
  const where = `Kafka (${options.flag ?? '--kafka'})`;
  // The connection only: the registry's serializer is opened after the cluster answered.
  const sink = cliKafkaSinkOptions({ ...kafka, schemaRegistry: undefined }, {});
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new AbortController();
  try {
    await Promise.race([
      checkKafkaCluster({
        brokers: sink.brokers,
        ...(sink.clientId === undefined ? {} : { clientId: sink.clientId }),
        ...(sink.tls === undefined ? {} : { tls: sink.tls }),
        ...(sink.sasl === undefined ? {} : { sasl: sink.sasl }),
        topics: [
          ...topicSpecs(kafka, options.topics ?? []),
          ...(options.watermarks === true && !kafka.createTopics
            ? [{ topic: `${kafka.topicPrefix}.kline.watermarks`, partitions: 1, replicationFactor: -1 }]
            : []),
        ],
        createTopics: kafka.createTopics,
        timeoutMs: options.timeoutMs,
        signal: stop.signal,
      }),
      new Promise<never>((_, reject) => {
        const brokers = [kafka.brokers].flat().join(',');
        timer = setTimeout(() => {
          stop.abort();
          reject(
            new QuoteflowError(
              'QF_KAFKA_CLUSTER',
              `${where} at ${brokers} did not answer within ${Math.round(options.timeoutMs / 1000)} s`,
            ),
          );
        }, options.timeoutMs + 2_000);
        onAbort = () => {
          stop.abort();
          reject(
            new QuoteflowError(
              'QF_KAFKA_CLUSTER',
              `${where} at ${brokers} had not answered when the command was stopped`,
            ),
          );
        };
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } catch (err) {
    if (err instanceof KafkaClusterError) {
      const hint =
        err.kind === 'missing-topic' && err.message.includes('.kline.watermarks')
          ? ` (K-lines exactly once keep their watermarks there: 1 partition, cleanup.policy=compact; or --kafka-delivery at-least-once)`
          : '';
      throw new KafkaClusterError(err.kind, `${where}: ${err.message}${hint}`, err);
    }
    throw err;
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) options.signal.removeEventListener('abort', onAbort);
  }
  if (options.watermarks === true) await checkWatermarksFormat(kafka, options.timeoutMs);
  if (kafka.schemaRegistry !== undefined)
    await openSchemaRegistry(kafka.schemaRegistry, kafka.topicPrefix, options.timeoutMs);
}

/**
 * K-lines exactly once (or maybe): a watermark topic of a newer quoteflow format is refused now
 * (exit 2). Anything else that keeps the topic from being read here (no permission to read it,
 * a delivery that turns out at least once, a slow answer) is left to the sink, which reads the
 * topic again when it opens and says what went wrong there: this check only moves a refusal
 * before the first request, and never fails a command the sink would run.
 */
async function checkWatermarksFormat(kafka: CliKafkaOptions, timeoutMs: number): Promise<void> {
  const sink = cliKafkaSinkOptions({ ...kafka, schemaRegistry: undefined }, {});
  try {
    await checkKlineWatermarksFormat({
      brokers: sink.brokers,
      ...(sink.clientId === undefined ? {} : { clientId: sink.clientId }),
      ...(sink.tls === undefined ? {} : { tls: sink.tls }),
      ...(sink.sasl === undefined ? {} : { sasl: sink.sasl }),
      topic: `${kafka.topicPrefix}.kline.watermarks`,
      timeoutMs: Math.min(timeoutMs, WATERMARKS_CHECK_TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof FormatVersionError) throw err;
  }
}

/** How long the start may spend reading the watermark topic for its format (the cluster answered just before). */
const WATERMARKS_CHECK_TIMEOUT_MS = 10_000;
