import { describe, expect, it } from 'vitest';
import type { SeriesWatermark } from '../../files/dataset-log-format.js';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import type { CommittedWatermark } from '../kline-watermark-record.js';
import { checkpointCommit, commitOutcome, transactionWatermarks } from './commit-outcome.js';

const w = (first: number, last: number, rows: number): SeriesWatermark => ({ first, last, rows });
const TOPIC = 'md.kline.watermarks';

/** What the sink w1 knows: A's bars 0-4 (its own), C's 0-9 (another worker's). */
const committed = new Map([
  ['A|1', w(0, 4, 5)],
  ['C|1', w(0, 9, 10)],
]);
const sink = { transactionalId: 'w1', committed };
/** A commit of A's bars 5-6 and B's bar 0 (new). */
const txn = transactionWatermarks(
  committed,
  new Map([
    ['A|1', w(5, 6, 2)],
    ['B|1', w(0, 0, 1)],
  ]),
);

/** The topic as read back: per series its newest record's watermark and transactional id. */
const topic = (...entries: [string, SeriesWatermark, string][]): Map<string, CommittedWatermark> =>
  new Map(entries.map(([series, watermark, transactionalId]) => [series, { watermark, transactionalId }]));

function fenced(run: () => unknown): KafkaKlineSinkError {
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(KafkaKlineSinkError);
  expect((err as KafkaKlineSinkError).code).toBe('QF_FENCED');
  return err as KafkaKlineSinkError;
}

describe('commitOutcome', () => {
  it('computes each series’ watermark before and with the transaction', () => {
    expect(txn.before).toEqual(
      new Map([
        ['A|1', w(0, 4, 5)],
        ['B|1', undefined],
      ]),
    );
    expect(txn.after).toEqual(
      new Map([
        ['A|1', w(0, 6, 7)],
        ['B|1', w(0, 0, 1)],
      ]),
    );
  });

  it('committed: the topic holds the transaction’s watermark records (another worker’s series moved on)', () => {
    const read = topic(['A|1', w(0, 6, 7), 'w1'], ['B|1', w(0, 0, 1), 'w1'], ['C|1', w(0, 20, 21), 'w2']);
    expect(commitOutcome(TOPIC, txn, read, true, sink)).toBe('committed');
  });

  it('not committed: the topic holds what the sink had before for every series', () => {
    const read = topic(['A|1', w(0, 4, 5), 'w1'], ['C|1', w(0, 9, 10), 'w2']);
    expect(commitOutcome(TOPIC, txn, read, true, sink)).toBe('not-committed');
    expect(commitOutcome(TOPIC, txn, read, false, sink)).toBe('not-committed');
  });

  it('a transaction without watermark records (forming updates only) counts as not committed', () => {
    const none = transactionWatermarks(committed, new Map());
    expect(commitOutcome(TOPIC, none, topic(['A|1', w(0, 4, 5), 'w1']), true, sink)).toBe('not-committed');
  });

  it.each([
    ['another producer moved a series of it on', topic(['A|1', w(0, 9, 10), 'w2']), true],
    ['half of it there (no single commit does that)', topic(['A|1', w(0, 6, 7), 'w1']), true],
    [
      'its records there though no commit was sent',
      topic(['A|1', w(0, 6, 7), 'w1'], ['B|1', w(0, 0, 1), 'w1']),
      false,
    ],
    [
      'a commit with its transactional id to another series it does not know of (it is a zombie)',
      topic(['A|1', w(0, 4, 5), 'w1'], ['D|1', w(0, 3, 4), 'w1']),
      true,
    ],
  ])(
    'QF_FENCED when the topic holds a commit this sink did not make: %s',
    (_what, read, mayHaveCommitted) => {
      const err = fenced(() => commitOutcome(TOPIC, txn, read, mayHaveCommitted, sink));
      expect(err.message).toMatch(
        /^kafka: md\.kline\.watermarks holds a commit to series [ABD]\|1 that this sink did not make/,
      );
    },
  );

  it('builds a checkpoint’s watermark records and reads its outcome back from the topic’s records', async () => {
    const c = checkpointCommit(
      TOPIC,
      sink,
      new Map([['A|1', w(5, 6, 2)]]),
      Date.UTC(2026, 0, 5),
      async () => [{ partition: 0, offset: 0n, key: 'A|1', value: c.marks[0]!.value.toString() }],
    );
    expect(c.after).toEqual(new Map([['A|1', w(0, 6, 7)]]));
    expect(c.marks.map((m) => m.key)).toEqual(['A|1']);
    expect(JSON.parse(c.marks[0]!.value.toString())).toMatchObject({
      first: 0,
      last: 6,
      rows: 7,
      transactional_id: 'w1',
    });
    expect(await c.outcome(true)).toBe('committed');
  });
});
