/**
 * Whether a K-line transaction committed, as its watermark records tell once nothing of it can
 * still change (after its producer was replaced): the question a commit with no answer leaves.
 */
import { addWatermark, type SeriesWatermark } from '../../files/dataset-log-format.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';

/** One transaction's watermarks, per series it added to: before it and with it. */
export interface TransactionWatermarks {
  /** What the sink had committed of the series before (`undefined`: nothing). */
  readonly before: ReadonlyMap<string, SeriesWatermark | undefined>;
  /** The watermark records the transaction holds. */
  readonly after: ReadonlyMap<string, SeriesWatermark>;
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
 * Anything else is a commit this sink did not make: another producer took its transactional id
 * or its series since (or committed these very bars while `mayHaveCommitted` is false, no commit
 * of this transaction having been sent): throws `QF_FENCED`, for resending would repeat bars.
 */
export function commitOutcome(
  topic: string,
  transaction: TransactionWatermarks,
  read: ReadonlyMap<string, SeriesWatermark>,
  mayHaveCommitted: boolean,
): 'committed' | 'not-committed' {
  const seen = [...transaction.after].map(([series, after]) => {
    const now = read.get(series);
    const state = same(now, after)
      ? 'committed'
      : same(now, transaction.before.get(series))
        ? 'before'
        : 'other';
    return { series, now, state };
  });
  if (seen.every((s) => s.state === 'before')) return 'not-committed';
  if (mayHaveCommitted && seen.every((s) => s.state === 'committed')) return 'committed';
  const odd = seen.find((s) => s.state === 'other') ?? seen.find((s) => s.state === 'committed')!;
  throw new KafkaKlineSinkError(
    'QF_FENCED',
    `kafka: ${topic} holds a commit to series ${odd.series} that this sink did not make (${JSON.stringify(odd.now ?? null)}, this sink's last: ${JSON.stringify(transaction.before.get(odd.series) ?? null)}): another producer took its transactional id or its series; nothing of its open transaction is visible, and this sink has stopped`,
  );
}

function same(a: SeriesWatermark | undefined, b: SeriesWatermark | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.first === b.first && a.last === b.last && a.rows === b.rows;
}
