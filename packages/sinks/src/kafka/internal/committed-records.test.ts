import { describe, expect, it } from 'vitest';
import { committedRecords, type FetchedBatch } from './committed-records.js';

const TXN = 0x10;
const CONTROL = 0x20;

/** A data batch of `values` at `offset` by producer `pid` (transactional unless `txn` is false). */
function data(offset: number, pid: number, values: string[], txn = true): FetchedBatch {
  return {
    firstOffset: BigInt(offset),
    lastOffsetDelta: values.length - 1,
    attributes: txn ? TXN : 0,
    producerId: BigInt(pid),
    records: values.map((v, i) => ({ offsetDelta: i, key: Buffer.from('k'), value: Buffer.from(v) })),
  };
}

/** A commit (type 1) or abort (type 0) marker of producer `pid` at `offset`. */
function marker(offset: number, pid: number, commit: boolean): FetchedBatch {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(commit ? 1 : 0, 2);
  return {
    firstOffset: BigInt(offset),
    lastOffsetDelta: 0,
    attributes: TXN | CONTROL,
    producerId: BigInt(pid),
    records: [{ offsetDelta: 0, key, value: Buffer.alloc(6) }],
  };
}

const values = (batches: FetchedBatch[], aborted: { producerId: bigint; firstOffset: bigint }[]) =>
  committedRecords(3, batches, aborted).records.map((r) => r.value);

describe('committedRecords', () => {
  it('keeps committed transactions and plain records, drops control records, and says where to go on', () => {
    const got = committedRecords(
      3,
      [data(0, 7, ['a', 'b']), marker(2, 7, true), data(3, 9, ['c'], false)],
      [],
    );
    expect(got.records).toEqual([
      { partition: 3, offset: 0n, key: 'k', value: 'a' },
      { partition: 3, offset: 1n, key: 'k', value: 'b' },
      { partition: 3, offset: 3n, key: 'k', value: 'c' },
    ]);
    expect(got.nextOffset).toBe(4n);
  });

  it('drops every aborted transaction of a producer that aborted several (where a one-per-producer filter keeps some)', () => {
    const batches = [
      data(0, 6, ['v0']),
      marker(1, 6, true),
      data(2, 6, ['v1']),
      marker(3, 6, false),
      data(4, 6, ['v2']),
      marker(5, 6, false),
      data(6, 6, ['v3']),
      marker(7, 6, true),
      data(8, 6, ['v4']),
      marker(9, 6, false),
    ];
    const aborted = [2n, 4n, 8n].map((firstOffset) => ({ producerId: 6n, firstOffset }));
    expect(values(batches, aborted)).toEqual(['v0', 'v3']);
  });

  it('keeps another producer’s records interleaved with an aborted transaction', () => {
    const batches = [
      data(0, 1, ['x1']),
      data(1, 2, ['y1']),
      data(2, 1, ['x2']),
      marker(3, 1, false),
      marker(4, 2, true),
    ];
    expect(values(batches, [{ producerId: 1n, firstOffset: 0n }])).toEqual(['y1']);
  });

  it('drops an aborted transaction whose marker lies beyond this fetch', () => {
    expect(values([data(0, 4, ['gone', 'too'])], [{ producerId: 4n, firstOffset: 0n }])).toEqual([]);
  });

  it('takes the batches in offset order and says nothing about where to go on when none came', () => {
    expect(values([data(1, 5, ['b'], false), data(0, 5, ['a'], false)], [])).toEqual(['a', 'b']);
    expect(committedRecords(0, [], []).nextOffset).toBeUndefined();
  });
});
