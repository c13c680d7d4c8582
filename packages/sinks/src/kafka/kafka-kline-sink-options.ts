import { InvalidOptionError } from '@quoteflow/core';
import type { KafkaTopicSpec } from './kafka-producer-driver.js';
import { KAFKA_SINK_DEFAULTS, type KafkaDriverName, type KafkaSinkOptions } from './kafka-sink.js';
import type { KafkaTransactionalDriverFactory } from './kafka-transactional-driver.js';
import { DEFAULT_TOPIC_PREFIX } from './to-kafka-message.js';

/** What a consumer of the K-line topic can rely on after a crash (contract.md, "Kafka"). */
export const KAFKA_DELIVERIES = ['exactly-once', 'at-least-once'] as const;
export type KafkaDelivery = (typeof KAFKA_DELIVERIES)[number];

/** Options of {@link KafkaKlineSink.open}; see {@link KAFKA_KLINE_SINK_DEFAULTS} for the defaults. */
export interface KafkaKlineSinkOptions extends Omit<KafkaSinkOptions, 'driver'> {
  /** `kafkajs` (default), `platformatic` (@platformatic/kafka), or a factory of your own. */
  readonly driver?: KafkaDriverName | KafkaTransactionalDriverFactory;
  /**
   * `exactly-once`: each checkpoint's records and the watermarks they add are one Kafka
   * transaction, so a `read_committed` consumer sees every final bar once, across kill -9, broker
   * restarts and takeovers. `at-least-once`: the idempotent producer only; after a crash a final
   * bar may come again (consumers dedupe on key + `kline_type` + `ts`).
   * @defaultValue `'exactly-once'`
   */
  readonly delivery?: KafkaDelivery;
  /**
   * The producer's `transactional.id`, required for `exactly-once`. Keep it stable per sink and
   * worker (`quoteflow-<host>-<worker>`, not a random one): opening a sink with the id of a process
   * that died aborts that process's open transaction at once and fences it, should it still be
   * alive. Two live sinks must never share one (the older one fails with `QF_FENCED`).
   */
  readonly transactionalId?: string;
  /**
   * How long the broker lets a transaction stay open (`transaction.timeout.ms`, at most the
   * broker's `transaction.max.timeout.ms`), ms: a process that dies mid-transaction and is not
   * restarted holds `read_committed` consumers of its partitions back this long (or until
   * `fence()`). A checkpoint must come well within it.
   * @defaultValue 60 000 ms (Kafka's)
   */
  readonly transactionTimeoutMs?: number;
  /**
   * How often a pipeline should checkpoint this sink, ms: a `read_committed` consumer sees records
   * only once their transaction commits, so far more often than files.
   * @defaultValue 1 000 ms
   */
  readonly checkpointEveryMs?: number;
  /** The compacted topic of committed watermarks; default `<topicPrefix>.kline.watermarks`. */
  readonly watermarkTopic?: string;
  /**
   * How long `open` and `refresh` wait for transactions open on the watermark topic (another
   * worker's checkpoint, a dead producer's transaction) to end, ms. Keep it above
   * `transactionTimeoutMs` plus the broker's abort check (10 s by default): a dead worker's
   * transaction ends at its timeout.
   * @defaultValue 75 000 ms
   */
  readonly watermarkReadTimeoutMs?: number;
  /**
   * Most records taken by `write()` and not yet acknowledged by the broker (`write` cannot wait);
   * past it the sink stops with `QF_BUFFER_OVERFLOW`. `flush()` waits for the acknowledgements.
   * @defaultValue 100 000 records
   */
  readonly maxBufferedRecords?: number;
  /**
   * Exactly once: other workers' transactional ids to fence at `open`, before the watermarks are
   * read (see {@link KafkaKlineSink.fence}): a worker that starts on series whose holder died need
   * not wait out the dead one's open transaction.
   */
  readonly fenceAtOpen?: readonly string[];
  /**
   * Exactly once: asked right before each commit and before a redone transaction takes its
   * producer's id back: false means this sink may no longer write its series (a cluster worker whose
   * lease lapsed); the transaction is not committed and the sink fails with `QF_FENCED`. Kafka fences
   * by transactional id only, so this is what keeps a paused worker whose series were taken over
   * (under other ids) from committing them after all, as `DatasetSink`'s `fence` does for files.
   */
  readonly fence?: () => boolean;
}

/** `segment.ms` of a watermark topic created here (unless the topic configs say otherwise): an hour. */
const WATERMARK_SEGMENT_MS = 3_600_000;

/** Defaults of {@link KafkaKlineSinkOptions} beyond those of `KAFKA_SINK_DEFAULTS`, units in the names. */
export const KAFKA_KLINE_SINK_DEFAULTS = {
  delivery: 'exactly-once',
  transactionTimeoutMs: 60_000,
  checkpointEveryMs: 1_000,
  watermarkReadTimeoutMs: 75_000,
  maxBufferedRecords: 100_000,
} as const satisfies Required<
  Pick<
    KafkaKlineSinkOptions,
    | 'delivery'
    | 'transactionTimeoutMs'
    | 'checkpointEveryMs'
    | 'watermarkReadTimeoutMs'
    | 'maxBufferedRecords'
  >
>;

/** The options of a K-line sink, checked, with every default filled in. */
export interface ResolvedKlineSinkOptions {
  readonly delivery: KafkaDelivery;
  readonly transactionalId: string | undefined;
  readonly transactionTimeoutMs: number;
  readonly checkpointEveryMs: number;
  readonly watermarkTopic: string;
  readonly watermarkReadTimeoutMs: number;
  readonly maxBufferedRecords: number;
  readonly topicPrefix: string;
  /** The topics `open` creates when missing: the data topic, and exactly once the watermark topic. */
  readonly topics: readonly KafkaTopicSpec[];
  /** Other workers' transactional ids to fence at `open`. */
  readonly fenceAtOpen: readonly string[];
}

/** Checks the K-line sink's own options (the shared ones are `KafkaSink`'s to check). */
export function resolveKlineSinkOptions(options: KafkaKlineSinkOptions): ResolvedKlineSinkOptions {
  const delivery = options.delivery ?? KAFKA_KLINE_SINK_DEFAULTS.delivery;
  if (!(KAFKA_DELIVERIES as readonly string[]).includes(delivery)) {
    throw new InvalidOptionError(
      'delivery',
      `kafka: "delivery" must be ${KAFKA_DELIVERIES.join(' or ')}, got ${JSON.stringify(delivery)}`,
    );
  }
  const id = options.transactionalId;
  if (id !== undefined) checkTransactionalId('transactionalId', id);
  if (delivery === 'exactly-once' && id === undefined) {
    throw new InvalidOptionError(
      'transactionalId',
      'kafka: delivery "exactly-once" needs a "transactionalId", stable per sink and worker (so a restarted process fences its dead predecessor)',
    );
  }
  const topicPrefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
  // A default one is as valid as the prefix, which KafkaSink checks.
  const watermarkTopic = options.watermarkTopic ?? `${topicPrefix}.kline.watermarks`;
  if (options.watermarkTopic !== undefined && !/^[A-Za-z0-9._-]{1,249}$/.test(String(watermarkTopic))) {
    throw new InvalidOptionError(
      'watermarkTopic',
      `kafka: "watermarkTopic" must be 1 to 249 letters, digits, '.', '_' or '-', got ${JSON.stringify(watermarkTopic)}`,
    );
  }
  const d = KAFKA_KLINE_SINK_DEFAULTS;
  const partitions = options.partitions ?? KAFKA_SINK_DEFAULTS.partitions;
  const replicationFactor = options.replicationFactor ?? KAFKA_SINK_DEFAULTS.replicationFactor;
  const configs = options.topicConfigs ?? {};
  const topics: KafkaTopicSpec[] = [
    {
      topic: `${topicPrefix}.kline`,
      partitions,
      replicationFactor,
      ...(Object.keys(configs).length === 0 ? {} : { configs }),
    },
  ];
  // One partition keeps every series' watermarks in commit order; compaction keeps the newest per series.
  if (delivery === 'exactly-once')
    topics.push({
      topic: watermarkTopic,
      partitions: 1,
      replicationFactor,
      // The caller's configs (min.insync.replicas, …) too, but it is compacted whatever they say.
      // Compaction skips the active segment, which Kafka rolls after 7 days by default: a sync's
      // week of checkpoints (a record per series each) would stay whole, read at every start.
      configs: { 'segment.ms': String(WATERMARK_SEGMENT_MS), ...configs, 'cleanup.policy': 'compact' },
    });
  return {
    delivery,
    transactionalId: delivery === 'exactly-once' ? id : undefined,
    transactionTimeoutMs: positiveInt(
      'transactionTimeoutMs',
      options.transactionTimeoutMs ?? d.transactionTimeoutMs,
    ),
    checkpointEveryMs: positiveInt('checkpointEveryMs', options.checkpointEveryMs ?? d.checkpointEveryMs),
    watermarkTopic,
    watermarkReadTimeoutMs: positiveInt(
      'watermarkReadTimeoutMs',
      options.watermarkReadTimeoutMs ?? d.watermarkReadTimeoutMs,
    ),
    maxBufferedRecords: positiveInt('maxBufferedRecords', options.maxBufferedRecords ?? d.maxBufferedRecords),
    topicPrefix,
    topics: (options.createTopics ?? KAFKA_SINK_DEFAULTS.createTopics) ? topics : [],
    fenceAtOpen: fenceIds(options.fenceAtOpen),
  };
}

function fenceIds(ids: unknown): readonly string[] {
  if (ids === undefined) return [];
  if (!Array.isArray(ids))
    throw new InvalidOptionError(
      'fenceAtOpen',
      `kafka: "fenceAtOpen" must be an array of transactional ids, got ${JSON.stringify(ids)}`,
    );
  for (const id of ids) checkTransactionalId('fenceAtOpen', id);
  return ids as readonly string[];
}

/** Checks a transactional id (of the sink, or one to fence): what Kafka and the CLI can carry. */
export function checkTransactionalId(option: string, id: unknown): void {
  if (typeof id !== 'string' || !/^[\x21-\x7e]{1,249}$/.test(id)) {
    throw new InvalidOptionError(
      option,
      `kafka: "${option}" must be 1 to 249 printable ASCII characters without spaces, got ${JSON.stringify(id)}`,
    );
  }
}

function positiveInt(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidOptionError(
      name,
      `kafka: "${name}" must be an integer >= 1, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Checks the ids given to `fence()`: transactional ids, none of them the sink's own. */
export function checkFencedIds(ids: readonly string[], own: string | undefined): void {
  for (const id of ids) {
    checkTransactionalId('transactionalIds', id);
    if (id === own) {
      throw new InvalidOptionError(
        'transactionalIds',
        `kafka: fence() takes other sinks' transactional ids, got this sink's own, ${JSON.stringify(id)}`,
      );
    }
  }
}
