import fc from 'fast-check';
import type { KlineType } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import {
  datasetKindOf,
  DatasetPartitioner,
  datasetPartitionOf,
  KLINE_SUB_PARTITIONS,
} from './dataset-columns.js';
import { bar, barUpdate, depth, suspension } from '../../test-support/test-records.js';

const T0 = Date.UTC(2026, 0, 31, 23, 59);

describe('datasetKindOf', () => {
  it('routes bars and final updates to kline, ticks to depth, records to suspension', () => {
    expect(datasetKindOf(bar('A', T0))).toBe('kline');
    expect(datasetKindOf(barUpdate('A', T0, true))).toBe('kline');
    expect(datasetKindOf(depth('A', 1n, T0, [], []))).toBe('depth');
    expect(datasetKindOf(suspension('A'))).toBe('suspension');
  });

  it('keeps a bar still forming out of every file', () => {
    expect(datasetKindOf(barUpdate('A', T0, false))).toBeUndefined();
  });
});

describe('datasetPartitionOf', () => {
  it.each([
    ['month', 'kline/kline_type=1/month=2026-01'],
    ['year', 'kline/kline_type=1/year=2026'],
    ['date', 'kline/kline_type=1/date=2026-01-31'],
    ['none', 'kline/kline_type=1'],
  ] as const)('puts a bar under its %s sub-partition by bar start in UTC', (sub, dir) => {
    expect(datasetPartitionOf(bar('A', T0), sub, 0)).toBe(dir);
  });

  it('puts depth by tick date (or the clock when the tick has none) and suspensions by exchange', () => {
    expect(datasetPartitionOf(depth('A', 1n, T0, [], []), 'month', 0)).toBe('depth/date=2026-01-31');
    expect(datasetPartitionOf(depth('A', 1n, undefined, [], []), 'month', Date.UTC(2026, 4, 2))).toBe(
      'depth/date=2026-05-02',
    );
    expect(datasetPartitionOf(suspension('A', { exchange: 'sse' }), 'month', 0)).toBe(
      'suspension/exchange=sse',
    );
  });

  it('agrees with DatasetPartitioner, whose per-period cache must never return a stale directory', () => {
    const sub = fc.constantFrom(...KLINE_SUB_PARTITIONS);
    const rec = fc.oneof(
      fc
        .record({ k: fc.constantFrom<KlineType>(1, 5, 8), t: fc.integer({ min: 0, max: 4102444800000 }) })
        .map(({ k, t }) => bar('A', t, { klineType: k })),
      fc.integer({ min: 0, max: 4102444800000 }).map((t) => depth('A', 1n, t, [], [])),
    );
    fc.assert(
      fc.property(sub, fc.array(rec, { maxLength: 50 }), (s, records) => {
        const p = new DatasetPartitioner(s);
        for (const r of records) expect(p.partitionOf(r, 0)).toBe(datasetPartitionOf(r, s, 0));
      }),
    );
  });
});
