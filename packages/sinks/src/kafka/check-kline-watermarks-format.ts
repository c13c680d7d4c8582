/**
 * Checks, before a pipeline fetches anything, that the K-line sink's watermark topic holds no
 * record of a newer quoteflow format than this release's: the sink reads the same records when
 * it opens, but only after a command's first requests.
 */
import { kafkajsLibrary } from './internal/kafka-clients.js';
import { readCommittedTopic } from './internal/read-committed-topic.js';
import { KAFKA_SINK_DEFAULTS, type KafkaSinkOptions } from './kafka-sink.js';
import { kafkajsSecurity, resolveKafkaSecurity } from './kafka-security.js';
import { klineWatermarkCommitsOf } from './kline-watermark-record.js';

/** What {@link checkKlineWatermarksFormat} checks. */
export interface KlineWatermarksFormatCheck extends Pick<
  KafkaSinkOptions,
  'brokers' | 'clientId' | 'tls' | 'sasl'
> {
  /** The watermark topic (`<topicPrefix>.kline.watermarks`). */
  readonly topic: string;
  /** How long the brokers may take to answer, ms. */
  readonly timeoutMs: number;
}

/**
 * Reads the committed records of the watermark topic up to its last stable offset (without
 * waiting for a transaction a killed sink left open: the sink fences it at open, and reads the
 * rest then; the newest of each series, as the sink reads them) and rejects with a `FormatVersionError` naming the record, its format version and
 * this release's when one is newer. A topic that does not exist yet holds nothing to refuse.
 * Other failures reject as the cluster check's or the watermark read's do.
 *
 * @example
 * ```ts
 * await checkKlineWatermarksFormat({ brokers: 'localhost:9092', topic: 'quoteflow.kline.watermarks', timeoutMs: 30_000 });
 * ```
 */
export async function checkKlineWatermarksFormat(check: KlineWatermarksFormatCheck): Promise<void> {
  const brokers = (typeof check.brokers === 'string' ? check.brokers.split(',') : [...check.brokers])
    .map((b) => b.trim())
    .filter(Boolean);
  const security = resolveKafkaSecurity(check.tls, check.sasl);
  const clientId = check.clientId ?? KAFKA_SINK_DEFAULTS.clientId;
  const { Kafka, logLevel } = kafkajsLibrary();
  const admin = new Kafka({
    clientId,
    brokers,
    connectionTimeout: Math.min(10_000, check.timeoutMs),
    requestTimeout: Math.min(30_000, check.timeoutMs),
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    ...kafkajsSecurity(security),
  }).admin();
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(check.topic)) return;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const records = await readCommittedTopic(
    {
      brokers,
      clientId,
      compression: KAFKA_SINK_DEFAULTS.compression,
      requestTimeoutMs: Math.min(KAFKA_SINK_DEFAULTS.requestTimeoutMs, check.timeoutMs),
      retryMaxDelayMs: KAFKA_SINK_DEFAULTS.retryMaxDelayMs,
      connectTimeoutMs: Math.min(KAFKA_SINK_DEFAULTS.connectTimeoutMs, check.timeoutMs),
      deliveryTimeoutMs: check.timeoutMs,
      ...security,
    },
    check.topic,
    check.timeoutMs,
    { stableNow: true },
  );
  klineWatermarkCommitsOf(check.topic, records);
}
