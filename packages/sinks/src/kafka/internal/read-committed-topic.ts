/**
 * Reads a whole (small) topic as a `read_committed` consumer, without a consumer group: list the
 * offsets, wait until no transaction open at the call holds any partition back, then fetch each
 * partition to its last stable offset. Both drivers use it (kafkajs has no consumer without a
 * group, and joining one costs a rebalance: about 0.4 s on the test broker, 3 s and more with a
 * broker's default `group.initial.rebalance.delay.ms`); @platformatic/kafka's `Consumer.fetch`
 * sends a plain Fetch. Its own filter of aborted records keeps some (it remembers one aborted
 * transaction per producer), so {@link committedRecords} filters them again.
 */
import type { Consumer } from '@platformatic/kafka';
import { monotonicClock, retryWithBudget } from '@quoteflow/core/internal';
import { platformaticKafka } from './kafka-clients.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import type { KafkaDriverOptions } from '../kafka-producer-driver.js';
import type { KafkaCommittedRecord } from '../kafka-transactional-driver.js';
import { committedRecords, type FetchedBatch } from './committed-records.js';
import { platformaticBackoff } from './platformatic-backoff.js';
import { platformaticSecurity } from '../kafka-security.js';

const FETCH_MAX_BYTES = 8 << 20;
const POLL_MS = 50;

/** One read: its consumer, what it reads, and its deadline on the monotonic clock (a wall-clock step moves none). */
interface TopicRead {
  readonly consumer: Consumer;
  readonly topic: string;
  readonly brokers: string;
  readonly endMs: number;
}

/** Polls every {@link POLL_MS} until `attempt` stops throwing its retryable sink error or the read's deadline. */
function pollUntilDeadline<T>(read: TopicRead, attempt: () => Promise<T>): Promise<T> {
  return retryWithBudget(attempt, {
    budgetMs: Math.max(0, read.endMs - monotonicClock.now()),
    baseDelayMs: POLL_MS,
    maxDelayMs: POLL_MS,
    jitter: 'none',
    retryable: (err) => err instanceof KafkaKlineSinkError && err.retryable,
  });
}

/** How {@link readCommittedTopic} reads. */
export interface CommittedTopicRead {
  /** Read up to each partition's last stable offset at the call, not waiting for open transactions. */
  readonly stableNow?: boolean;
}

/**
 * The newest committed record of each key of `topic` (a tombstone included), per partition in
 * offset order, as compaction would leave it: the read holds one record per key however long the
 * topic grew since its last compaction (a compacted topic's active segment is never compacted).
 * Waits at most `waitMs` for the transactions open at the call to end (with `stableNow`, reads up
 * to each partition's last stable offset at the call instead, the records of no open transaction);
 * rejects with `QF_KAFKA_WATERMARKS` naming the brokers, the partition and its offsets when one
 * stays open, or when the brokers do not answer.
 */
export async function readCommittedTopic(
  options: KafkaDriverOptions,
  topic: string,
  waitMs: number,
  { stableNow = false }: CommittedTopicRead = {},
): Promise<KafkaCommittedRecord[]> {
  const brokers = options.brokers.join(',');
  const { FetchIsolationLevels, ListOffsetTimestamps } = platformaticKafka();
  const consumer = groupFreeConsumer(options);
  const read: TopicRead = { consumer, topic, brokers, endMs: monotonicClock.now() + waitMs };
  try {
    const offsets = async (isolationLevel: number, timestamp: bigint): Promise<bigint[]> =>
      (await consumer.listOffsets({ topics: [topic], isolationLevel, timestamp })).get(topic) ?? [];
    const start = await offsets(FetchIsolationLevels.READ_UNCOMMITTED, ListOffsetTimestamps.EARLIEST);
    const high = await offsets(FetchIsolationLevels.READ_UNCOMMITTED, ListOffsetTimestamps.LATEST);
    const stable = await pollUntilDeadline(read, async () => {
      const stable = await offsets(FetchIsolationLevels.READ_COMMITTED, ListOffsetTimestamps.LATEST);
      const open = high.findIndex((h, p) => (stable[p] ?? -1n) < h);
      if (open < 0 || stableNow) return stable;
      throw new KafkaKlineSinkError(
        'QF_KAFKA_WATERMARKS',
        `kafka: ${topic} partition ${open} on ${brokers} still holds a transaction open after ${waitMs} ms ` +
          `(last stable offset ${stable[open]}, high watermark ${high[open]}): a producer that died mid-transaction ` +
          `holds it until its transaction timeout; fence() its transactional id, or raise watermarkReadTimeoutMs`,
        { retryable: true },
      );
    });
    const described = (await consumer.metadata({ topics: [topic] })).topics.get(topic);
    if (described === undefined)
      throw new KafkaKlineSinkError(
        'QF_KAFKA_WATERMARKS',
        `kafka: ${brokers} gave no metadata for ${topic}`,
        {
          retryable: true,
        },
      );
    const records: KafkaCommittedRecord[] = [];
    for (const [partition, end] of stable.entries()) {
      const leader = described.partitions[partition]?.leader ?? -1;
      // Re-inserted on each newer record, so the newest records come out in their offsets' order.
      const newest = new Map<string, KafkaCommittedRecord>();
      let offset = start[partition] ?? 0n;
      while (offset < end) {
        const from = offset;
        const fetched = await pollUntilDeadline(read, () =>
          fetchFrom(read, described.id, leader, partition, from),
        );
        for (const r of fetched.records) {
          if (r.offset >= end) continue;
          newest.delete(r.key);
          newest.set(r.key, r);
        }
        offset = fetched.nextOffset;
      }
      records.push(...newest.values());
    }
    return records;
  } catch (err) {
    if (err instanceof KafkaKlineSinkError) throw err;
    throw new KafkaKlineSinkError(
      'QF_KAFKA_WATERMARKS',
      `kafka: could not read ${topic} from ${brokers}: ${err instanceof Error ? err.message : String(err)}`,
      { retryable: true, cause: err },
    );
  } finally {
    await consumer.close().catch(() => undefined);
  }
}

/**
 * The committed records of one fetch of `partition` from `offset`, and the offset after them; a
 * retryable sink error when nothing below the last stable offset came back (the log moved:
 * deleted records), for {@link pollUntilDeadline} to ask again.
 */
async function fetchFrom(
  read: TopicRead,
  topicId: string,
  leader: number,
  partition: number,
  offset: bigint,
): Promise<{ readonly records: KafkaCommittedRecord[]; readonly nextOffset: bigint }> {
  const { FetchIsolationLevels } = platformaticKafka();
  const response = await read.consumer.fetch({
    node: leader,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxWaitTime: 0,
    maxBytes: FETCH_MAX_BYTES,
    topics: [
      {
        topicId,
        partitions: [
          {
            partition,
            fetchOffset: offset,
            partitionMaxBytes: FETCH_MAX_BYTES,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          },
        ],
      },
    ],
  });
  const fetched = response.responses[0]?.partitions.find((p) => p.partitionIndex === partition);
  const batches = (fetched?.records ?? []) as FetchedBatch[];
  const { records, nextOffset } = committedRecords(partition, batches, fetched?.abortedTransactions ?? []);
  if (nextOffset === undefined || nextOffset <= offset)
    throw new KafkaKlineSinkError(
      'QF_KAFKA_WATERMARKS',
      `kafka: could not read ${read.topic} from ${read.brokers}: fetch of ${read.topic} partition ${partition} at offset ${offset} returned nothing`,
      { retryable: true },
    );
  return { records, nextOffset };
}

/** A consumer that never joins its group (fetch and listOffsets need none), with the driver's connection. */
function groupFreeConsumer(options: KafkaDriverOptions): Consumer {
  const { Consumer } = platformaticKafka();
  return new Consumer({
    clientId: options.clientId,
    // Never joined: Consumer.fetch and listOffsets need no group, but the constructor wants an id.
    groupId: `${options.clientId}.read-committed`,
    bootstrapBrokers: [...options.brokers],
    connectTimeout: options.connectTimeoutMs,
    timeout: options.requestTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    retries: Math.ceil(options.deliveryTimeoutMs / options.retryMaxDelayMs) + 1,
    retryDelay: platformaticBackoff(options.retryMaxDelayMs),
    ...platformaticSecurity(options),
  });
}
