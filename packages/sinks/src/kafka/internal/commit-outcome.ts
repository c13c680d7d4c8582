/**
 * What a K-line checkpoint commits (its watermark records), and whether it committed, as those
 * records tell once nothing of its transaction can still change (after its producer was
 * replaced): the question a commit with no answer leaves.
 */
import { addWatermark, type SeriesWatermark } from '../../files/dataset-log-format.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import type { KafkaCommittedRecord } from '../kafka-transactional-driver.js';
import {
  klineWatermarkCommitsOf,
  klineWatermarkMessage,
  type CommittedWatermark,
} from '../kline-watermark-record.js';
import type { KafkaMessage } from '../to-kafka-message.js';
import type { CommitOutcomeCheck } from './kline-transaction.js';

/** One transaction's watermarks, per series it added to: before it and with it. */
export interface TransactionWatermarks {
  /** What the sink had committed of the series before (`undefined`: nothing). */
  readonly before: ReadonlyMap<string, SeriesWatermark | undefined>;
  /** The watermark records the transaction holds. */
  readonly after: ReadonlyMap<string, SeriesWatermark>;
}

/** What the sink knows: its transactional id and every series' committed watermark. */
export interface SinkWatermarks {
  readonly transactionalId: string | undefined;
  readonly committed: ReadonlyMap<string, SeriesWatermark>;
}

/** A checkpoint's commit: see {@link checkpointCommit}. */
export interface CheckpointCommit {
  /** Per series it adds to, its watermark once committed. */
  readonly after: ReadonlyMap<string, SeriesWatermark>;
  /** Its watermark records, one per series. */
  readonly marks: readonly KafkaMessage[];
  /** Reads the watermark topic (`read`) and tells whether it committed ({@link commitOutcome}). */
  readonly outcome: CommitOutcomeCheck;
}

/**
 * The commit of a checkpoint adding `added` to what the sink committed: its watermark records
 * (to `topic`, stamped `nowMs`) and how to read its outcome back.
 */
export function checkpointCommit(
  topic: string,
  sink: SinkWatermarks,
  added: ReadonlyMap<string, SeriesWatermark>,
  nowMs: number,
  read: () => Promise<readonly KafkaCommittedRecord[]>,
): CheckpointCommit {
  const w = transactionWatermarks(sink.committed, added);
  return {
    after: w.after,
    marks: [...w.after].map(([key, mark]) =>
      klineWatermarkMessage(topic, key, mark, sink.transactionalId, nowMs),
    ),
    outcome: async (mayHaveCommitted) =>
      commitOutcome(topic, w, klineWatermarkCommitsOf(topic, await read()), mayHaveCommitted, sink),
  };
}

/** The watermarks of a transaction adding `added` to what the sink `committed`. */
export function transactionWatermarks(
  committed: ReadonlyMap<string, SeriesWatermark>,
  added: ReadonlyMap<string, SeriesWatermark>,
): TransactionWatermarks {
  const before = new Map([...added.keys()].map((series) => [series, committed.get(series)]));
  const after = new Map([...added].map(([series, w]) => [series, addWatermark(before.get(series), w)]));
  return { before, after };
}

/**
 * `'committed'` when the watermark topic (`read`, newest per series, read `read_committed` to its
 * end) holds the transaction's records for every series it added to, `'not-committed'` when it
 * holds what the sink had before for every one. A series' `rows` count every bar ever committed
 * for it and grow with each commit, so `(first, last, rows)` after the transaction are its own: no
 * sequence number is needed. A transaction without watermark records (forming updates only) counts
 * as not committed: sending it again repeats forming updates, which the contract allows.
 *
 * Anything else is a commit this sink did not make, and sending again could repeat bars: throws
 * `QF_FENCED`. That is, on the transaction's series, another value (another producer took its
 * transactional id or its series), or these very records while `mayHaveCommitted` is false (no
 * commit of this transaction was sent); on any other series, a record with this sink's
 * transactional id that it does not know of (a process with the same id committed since: this
 * sink is a zombie, and its view of what is committed is stale).
 */
export function commitOutcome(
  topic: string,
  transaction: TransactionWatermarks,
  read: ReadonlyMap<string, CommittedWatermark>,
  mayHaveCommitted: boolean,
  sink: SinkWatermarks,
): 'committed' | 'not-committed' {
  const seen = [...transaction.after].map(([series, after]) => {
    const now = read.get(series)?.watermark;
    const state = same(now, after)
      ? 'committed'
      : same(now, transaction.before.get(series))
        ? 'before'
        : 'other';
    return { series, now, known: transaction.before.get(series), state };
  });
  for (const [series, c] of read) {
    if (transaction.after.has(series) || c.transactionalId !== sink.transactionalId) continue;
    const known = sink.committed.get(series);
    if (!same(c.watermark, known)) seen.push({ series, now: c.watermark, known, state: 'other' });
  }
  if (seen.every((s) => s.state === 'before')) return 'not-committed';
  if (mayHaveCommitted && seen.every((s) => s.state === 'committed')) return 'committed';
  const odd = seen.find((s) => s.state === 'other') ?? seen.find((s) => s.state === 'committed')!;
  throw new KafkaKlineSinkError(
    'QF_FENCED',
    `kafka: ${topic} holds a commit to series ${odd.series} that this sink did not make (${JSON.stringify(odd.now ?? null)}, this sink's last: ${JSON.stringify(odd.known ?? null)}): another producer took its transactional id or its series; nothing of its open transaction is visible, and this sink has stopped`,
  );
}

function same(a: SeriesWatermark | undefined, b: SeriesWatermark | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.first === b.first && a.last === b.last && a.rows === b.rows;
}
