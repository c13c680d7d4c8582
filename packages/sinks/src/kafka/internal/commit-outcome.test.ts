import { describe, expect, it } from 'vitest';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import { commitOutcome, transactionWatermarks } from './commit-outcome.js';

const w = (first: number, last: number, rows: number) => ({ first, last, rows });

describe('commitOutcome', () => {
  // A commit of bars 5-6 of A and bar 0 of B (new), after A's 0-4.
  const txn = transactionWatermarks(
    new Map([
      ['A|1', w(0, 4, 5)],
      ['C|1', w(0, 9, 10)],
    ]),
    new Map([
      ['A|1', w(5, 6, 2)],
      ['B|1', w(0, 0, 1)],
    ]),
  );

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

  it('committed: the topic holds the transaction’s watermark records (other series may have moved)', () => {
    const read = new Map([
      ['A|1', w(0, 6, 7)],
      ['B|1', w(0, 0, 1)],
      ['C|1', w(0, 20, 21)],
    ]);
    expect(commitOutcome('md.kline.watermarks', txn, read, true)).toBe('committed');
  });

  it('not committed: the topic holds what the sink had before for every series', () => {
    expect(commitOutcome('md.kline.watermarks', txn, new Map([['A|1', w(0, 4, 5)]]), true)).toBe(
      'not-committed',
    );
    expect(commitOutcome('md.kline.watermarks', txn, new Map([['A|1', w(0, 4, 5)]]), false)).toBe(
      'not-committed',
    );
  });

  it('a transaction without watermark records (forming updates only) counts as not committed', () => {
    const none = transactionWatermarks(new Map(), new Map());
    expect(commitOutcome('md.kline.watermarks', none, new Map(), true)).toBe('not-committed');
  });

  it.each([
    ['another producer moved a series on', new Map([['A|1', w(0, 9, 10)]]), true],
    ['half of it there (no single commit does that)', new Map([['A|1', w(0, 6, 7)]]), true],
    [
      'its records there though no commit was sent',
      new Map([
        ['A|1', w(0, 6, 7)],
        ['B|1', w(0, 0, 1)],
      ]),
      false,
    ],
  ])(
    'QF_FENCED when the topic holds a commit this sink did not make: %s',
    (_what, read, mayHaveCommitted) => {
      let err: unknown;
      try {
        commitOutcome('md.kline.watermarks', txn, read, mayHaveCommitted);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KafkaKlineSinkError);
      expect((err as KafkaKlineSinkError).code).toBe('QF_FENCED');
      expect((err as KafkaKlineSinkError).message).toMatch(
        /^kafka: md\.kline\.watermarks holds a commit to series [AB]\|1 that this sink did not make/,
      );
    },
  );
});
