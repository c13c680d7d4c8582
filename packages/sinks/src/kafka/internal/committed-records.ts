/**
 * The records of one fetched partition that a `read_committed` consumer delivers, by the
 * algorithm of the Java consumer (`CompletedFetch`): walking the batches in offset order, a
 * producer enters the aborted set when the fetch response's list of aborted transactions says
 * one of its transactions starts at or before the batch's last offset, and leaves it at its abort
 * marker; transactional batches of a producer in the set and every control batch are skipped.
 */
import type { KafkaCommittedRecord } from '../kafka-transactional-driver.js';

const IS_TRANSACTIONAL = 0x10;
const IS_CONTROL = 0x20;
/** A control record's key is `version: int16, type: int16`; type 0 ends an aborted transaction. */
const ABORT_MARKER = 0;

/** A record batch as fetched (the fields of @platformatic/kafka's `RecordsBatch` this needs). */
export interface FetchedBatch {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly attributes: number;
  readonly producerId: bigint;
  readonly records: readonly {
    readonly offsetDelta: number;
    readonly key: Buffer | null;
    readonly value: Buffer | null;
  }[];
}

/** An entry of a fetch response's `abortedTransactions`. */
export interface AbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
}

/** What one fetch of one partition yields: the committed records, and where the next fetch starts. */
export interface CommittedFetch {
  readonly records: KafkaCommittedRecord[];
  /** One past the last offset of the last batch seen (control batches too); `undefined` if none. */
  readonly nextOffset: bigint | undefined;
}

/** The committed records of `batches` (one partition's fetch), given its aborted transactions. */
export function committedRecords(
  partition: number,
  batches: readonly FetchedBatch[],
  abortedTransactions: readonly AbortedTransaction[],
): CommittedFetch {
  const pendingAborts = [...abortedTransactions].sort((a, b) => compare(a.firstOffset, b.firstOffset));
  const ordered = [...batches].sort((a, b) => compare(a.firstOffset, b.firstOffset));
  const aborted = new Set<bigint>();
  const records: KafkaCommittedRecord[] = [];
  let nextOffset: bigint | undefined;
  for (const batch of ordered) {
    const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    nextOffset = lastOffset + 1n;
    while (pendingAborts.length > 0 && pendingAborts[0]!.firstOffset <= lastOffset)
      aborted.add(pendingAborts.shift()!.producerId);
    const transactional = (batch.attributes & IS_TRANSACTIONAL) !== 0;
    if ((batch.attributes & IS_CONTROL) !== 0) {
      const key = batch.records[0]?.key;
      if (transactional && key !== null && key !== undefined && key.length >= 4) {
        if (key.readInt16BE(2) === ABORT_MARKER) aborted.delete(batch.producerId);
      }
      continue;
    }
    if (transactional && aborted.has(batch.producerId)) continue;
    for (const r of batch.records) {
      records.push({
        partition,
        offset: batch.firstOffset + BigInt(r.offsetDelta),
        key: r.key === null ? '' : r.key.toString('utf8'),
        value: r.value === null ? undefined : r.value.toString('utf8'),
      });
    }
  }
  return { records, nextOffset };
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
