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
import { platformaticKafka } from './kafka-clients.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import type { KafkaDriverOptions } from '../kafka-producer-driver.js';
import type { KafkaCommittedRecord } from '../kafka-transactional-driver.js';
import { committedRecords, type FetchedBatch } from './committed-records.js';
import { platformaticBackoff } from './platformatic-backoff.js';
import { platformaticSecurity } from '../kafka-security.js';

const FETCH_MAX_BYTES = 8 << 20;
const POLL_MS = 50;

/**
 * Every committed record of `topic`, per partition in offset order. Waits at most `waitMs` for
 * the transactions open at the call to end (with `stableNow`, reads up to each partition's last
 * stable offset at the call instead, the records of no open transaction); rejects with `QF_KAFKA_WATERMARKS` naming the
 * brokers, the partition and its offsets when one stays open, or when the brokers do not answer.
 */
export async function readCommittedTopic(
  options: KafkaDriverOptions,
  topic: string,
  waitMs: number,
  stableNow = false,
): Promise<KafkaCommittedRecord[]> {
  const brokers = options.brokers.join(',');
  const { FetchIsolationLevels, ListOffsetTimestamps } = platformaticKafka();
  const consumer = groupFreeConsumer(options);
  try {
    const deadline = Date.now() + waitMs;
    const offsets = async (isolationLevel: number, timestamp: bigint): Promise<bigint[]> =>
      (await consumer.listOffsets({ topics: [topic], isolationLevel, timestamp })).get(topic) ?? [];
    const start = await offsets(FetchIsolationLevels.READ_UNCOMMITTED, ListOffsetTimestamps.EARLIEST);
    const high = await offsets(FetchIsolationLevels.READ_UNCOMMITTED, ListOffsetTimestamps.LATEST);
    let stable = await offsets(FetchIsolationLevels.READ_COMMITTED, ListOffsetTimestamps.LATEST);
    for (;;) {
      const open = high.findIndex((h, p) => (stable[p] ?? -1n) < h);
      if (open < 0 || stableNow) break;
      if (Date.now() >= deadline) {
        throw new KafkaKlineSinkError(
          'QF_KAFKA_WATERMARKS',
          `kafka: ${topic} partition ${open} on ${brokers} still holds a transaction open after ${waitMs} ms ` +
            `(last stable offset ${stable[open]}, high watermark ${high[open]}): a producer that died mid-transaction ` +
            `holds it until its transaction timeout; fence() its transactional id, or raise watermarkReadTimeoutMs`,
          { retryable: true },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, deadline - Date.now())));
      stable = await offsets(FetchIsolationLevels.READ_COMMITTED, ListOffsetTimestamps.LATEST);
    }
    const described = (await consumer.metadata({ topics: [topic] })).topics.get(topic);
    if (described === undefined) throw new Error(`no metadata for ${topic}`);
    const records: KafkaCommittedRecord[] = [];
    for (const [partition, end] of stable.entries()) {
      let offset = start[partition] ?? 0n;
      while (offset < end) {
        const response = await consumer.fetch({
          node: described.partitions[partition]?.leader ?? -1,
          isolationLevel: FetchIsolationLevels.READ_COMMITTED,
          maxWaitTime: 0,
          maxBytes: FETCH_MAX_BYTES,
          topics: [
            {
              topicId: described.id,
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
        const { records: committed, nextOffset } = committedRecords(
          partition,
          batches,
          fetched?.abortedTransactions ?? [],
        );
        if (nextOffset === undefined || nextOffset <= offset) {
          // Nothing below the last stable offset came back: the log moved (deleted records).
          if (Date.now() >= deadline)
            throw new Error(`fetch of ${topic} partition ${partition} at offset ${offset} returned nothing`);
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
          continue;
        }
        for (const r of committed) if (r.offset < end) records.push(r);
        offset = nextOffset;
      }
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
