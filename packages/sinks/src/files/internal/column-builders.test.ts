import fc from 'fast-check';
import type { Bar } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import { DATASET_COLUMNS, SUSPENSION_RAW_COLUMNS } from '../dataset-columns.js';
import { createColumnBuilder } from './column-builders.js';
import type { ColumnBatch } from './column-data.js';
import { bar, depth, level, suspension } from '../../../test-support/test-records.js';

/** Decodes a batch back into rows, the way a reader would (a reference for the builders). */
function rowsOf(batch: ColumnBatch): Record<string, unknown>[] {
  return Array.from({ length: batch.rows }, (_, i) => {
    const row: Record<string, unknown> = {};
    for (const c of batch.columns) {
      if (c.kind === 'dict-utf8') row[c.name] = c.dict[c.indices[i]!];
      else if (c.kind === 'utf8') row[c.name] = c.values[i];
      else if (c.kind === 'levels') {
        const side = [];
        for (let j = c.offsets[i]!; j < c.offsets[i + 1]!; j++) {
          side.push({ price: c.price[j], volume: c.volumeValid[j] === 1 ? c.volume[j] : null });
        }
        row[c.name] = side;
      } else row[c.name] = c.valid !== undefined && c.valid[i] === 0 ? null : c.values[i];
    }
    return row;
  });
}

const T0 = Date.UTC(2026, 0, 31, 23, 59);

describe('column builders', () => {
  const arbBar = fc
    .record({
      code: fc.constantFrom('AAPL.US', '700.HK', '浦发.SH', 'BTCUSDT'),
      tsMs: fc.integer({ min: 0, max: 4102444800000 }),
      open: fc.double({ noNaN: true, noDefaultInfinity: true }),
      close: fc.double({ noNaN: true, noDefaultInfinity: true }),
      volume: fc.option(fc.double({ min: 0, max: 1e12, noNaN: true }), { nil: null }),
      turnover: fc.option(fc.double({ min: 0, max: 1e15, noNaN: true }), { nil: null }),
      readAtMs: fc.integer({ min: 0, max: 4102444800000 }),
    })
    .map((r): Bar => bar(r.code, r.tsMs, r));

  it('maps bars to the kline columns exactly, nulls included, across builds', () => {
    fc.assert(
      fc.property(
        fc.array(arbBar, { maxLength: 3000 }),
        fc.array(arbBar, { maxLength: 50 }),
        (first, second) => {
          const b = createColumnBuilder('kline');
          for (const [records, build] of [first, second].map((rs) => [rs, () => b.build()] as const)) {
            for (const r of records) b.append(r);
            expect(b.rows).toBe(records.length);
            const batch = build();
            expect(batch.columns.map((c) => c.name)).toEqual(DATASET_COLUMNS.kline.map((c) => c.name));
            expect(rowsOf(batch)).toEqual(
              records.map((r) => ({
                code: r.code,
                ts: r.tsMs,
                open: r.open,
                high: r.high,
                low: r.low,
                close: r.close,
                volume: r.volume,
                turnover: r.turnover,
                read_at: r.readAtMs,
              })),
            );
          }
        },
      ),
    );
  });

  it('ends the kline columns with read_at, a non-null timestamp(ms, UTC) = readAtMs, after turnover', () => {
    expect(DATASET_COLUMNS.kline.slice(-2)).toEqual([
      { name: 'turnover', type: 'float64', nullable: true },
      { name: 'read_at', type: 'timestamp[ms, UTC]', nullable: false },
    ]);
    const b = createColumnBuilder('kline');
    b.append(bar('A', T0, { readAtMs: T0 + 61_000, receivedAtMs: T0 + 61_250 }));
    const read = b.build().columns.find((c) => c.name === 'read_at');
    expect(read).toMatchObject({ kind: 'timestamp-ms', nullable: false, valid: undefined });
    expect(rowsOf({ rows: 1, columns: [read!] })).toEqual([{ read_at: T0 + 61_000 }]);
  });

  it('maps depth ticks with missing seq/time, empty sides and missing volumes', () => {
    const b = createColumnBuilder('depth');
    b.append(depth('A', 2n ** 64n - 1n, T0, [level(1.5, 10), level(1.4, undefined)], []));
    b.append(depth('B', undefined, undefined, [], [level(2, 3)]));
    expect(rowsOf(b.build())).toEqual([
      {
        code: 'A',
        seq: 2n ** 64n - 1n,
        tick_time: T0,
        bids: [
          { price: 1.5, volume: 10 },
          { price: 1.4, volume: null },
        ],
        asks: [],
      },
      { code: 'B', seq: null, tick_time: null, bids: [], asks: [{ price: 2, volume: 3 }] },
    ]);
  });

  it('maps a suspension to the typed columns plus every raw wire field under raw_<snake_case>', () => {
    const b = createColumnBuilder('suspension');
    b.append(
      suspension('XYZ', { haltDateTime: '2026-01-29 10:15:00', haltAtMs: 5, pauseThresholdPrice: '1.5' }),
    );
    const [row] = rowsOf(b.build());
    expect(row).toMatchObject({
      symbol: 'XYZ',
      symbol_name: null,
      halt_at: 5,
      resume_at: null,
      publish_date: Date.UTC(2026, 0, 5, 13),
      halt_reason: null,
      raw_symbol: 'XYZ',
      raw_halt_date_time: '2026-01-29 10:15:00',
      raw_pause_threshold_price: '1.5',
      raw_publish_date: '2026-01-05 08:00:00',
    });
    expect(Object.keys(row!)).toEqual(DATASET_COLUMNS.suspension.map((c) => c.name));
  });

  it('names every suspension column once', () => {
    const names = DATASET_COLUMNS.suspension.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    expect(SUSPENSION_RAW_COLUMNS.length).toBe(13);
  });
});
