import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bar, KlineType } from '@quoteflow/core';
import { DatasetWriter, type DatasetFormat } from '@quoteflow/sinks';
import { suspension } from '../../sinks/test-support/test-records.js';
import { inspectDataset } from './inspect-dataset.js';
import { readKlineBars, readSeriesStarts } from './read-kline-bars.js';

const MIN = 60_000;
const DAY = 86_400_000;

function bar(code: string, klineType: KlineType, tsMs: number): Bar {
  return {
    type: 'bar',
    code,
    klineType,
    tsMs,
    open: 1,
    high: 2,
    low: 0.5,
    close: 1.5,
    volume: 10,
    turnover: 15,
    readAtMs: tsMs + DAY,
    receivedAtMs: tsMs + DAY + 1,
  };
}

/** Bar starts every `stepMs` from `fromMs`, `count` of them. */
const every = (fromMs: number, stepMs: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => fromMs + i * stepMs);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-inspect-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(format: DatasetFormat, batches: Bar[][]): Promise<void> {
  for (const batch of batches) {
    const writer = new DatasetWriter({ dir, format });
    await writer.write(batch);
    await writer.close();
  }
}

describe.each(['parquet', 'ndjson'] as const)('inspectDataset (%s files)', (format) => {
  it('reports only the gaps the calendar does not explain, duplicates, and the file counts', async () => {
    const btc0 = Date.UTC(2026, 2, 2, 10, 0); // a Monday
    const btc = [...every(btc0, MIN, 10), ...every(btc0 + 13 * MIN, MIN, 5)]; // 3 bars missing
    // EURUSD daily over two weekends: the Saturdays and Sundays hold no bars, which is not a gap.
    const eur = [...every(Date.UTC(2026, 2, 2), DAY, 5), ...every(Date.UTC(2026, 2, 9), DAY, 5)];
    // AAPL 1-minute: the last 3 minutes of Wednesday 2025-12-24 (a half day, close 13:00 New York =
    // 18:00 UTC), nothing on Christmas, then Friday's first 3 minutes (14:30 UTC): no gap.
    const aapl = [
      ...every(Date.UTC(2025, 11, 24, 17, 57), MIN, 3),
      ...every(Date.UTC(2025, 11, 26, 14, 30), MIN, 3),
    ];
    // 700.HK across the lunch break (12:00-13:00 Hong Kong = 04:00-05:00 UTC) on 2026-03-03: no gap.
    const hk = [...every(Date.UTC(2026, 2, 3, 3, 58), MIN, 2), ...every(Date.UTC(2026, 2, 3, 5, 0), MIN, 2)];
    await write(format, [
      [...btc.slice(0, 8).map((t) => bar('BTCUSDT', 1, t)), ...eur.map((t) => bar('EURUSD', 8, t))],
      // The second file repeats BTC's 8th bar: one duplicate.
      [...btc.slice(7).map((t) => bar('BTCUSDT', 1, t)), ...aapl.map((t) => bar('AAPL.US', 1, t))],
      hk.map((t) => bar('700.HK', 1, t)),
    ]);

    const { kline, depth, suspension } = await inspectDataset(dir);
    expect(kline.files).toBeGreaterThanOrEqual(3);
    expect(depth.files).toBe(0);
    expect(suspension.files).toBe(0);
    const byCode = new Map(kline.series.map((s) => [s.code, s]));
    expect(byCode.get('BTCUSDT')).toEqual({
      code: 'BTCUSDT',
      klineType: 1,
      rows: 16,
      duplicates: 1,
      firstMs: btc0,
      lastMs: btc0 + 17 * MIN,
      gaps: [{ fromMs: btc0 + 10 * MIN, toMs: btc0 + 13 * MIN, bars: 3 }],
    });
    for (const code of ['EURUSD', 'AAPL.US', '700.HK']) {
      expect(byCode.get(code)?.gaps, code).toEqual([]);
      expect(byCode.get(code)?.duplicates, code).toBe(0);
    }
    expect(byCode.get('EURUSD')?.rows).toBe(10);
    expect(kline.series.map((s) => s.code)).toEqual(['700.HK', 'AAPL.US', 'BTCUSDT', 'EURUSD']);

    // The starts read once with readSeriesStarts (three columns) give the same inspection, and
    // hold what readKlineBars reads of every row.
    const starts = await readSeriesStarts(dir);
    expect((await inspectDataset(dir, { starts })).kline.series).toEqual(kline.series);
    const bars = await readKlineBars(dir);
    for (const s of starts.values()) {
      const own = bars.filter((b) => b.code === s.code && b.klineType === s.klineType);
      expect(s.starts, s.code).toEqual(own.map((b) => b.tsMs));
      expect(s.lastReadMs, s.code).toBe(Math.max(...own.map((b) => b.readAtMs!)));
    }
    const ranged = await readSeriesStarts(dir, {
      codes: ['BTCUSDT'],
      fromMs: btc0 + 5 * MIN,
      toMs: btc0 + 14 * MIN,
    });
    expect([...ranged.values()].map((s) => s.starts)).toEqual([
      [...every(btc0 + 5 * MIN, MIN, 3), btc0 + 7 * MIN, ...every(btc0 + 8 * MIN, MIN, 2), btc0 + 13 * MIN],
    ]);
  });
});

describe.each(['parquet', 'arrow', 'ndjson'] as const)('readKlineBars (%s files)', (format) => {
  it('reads a missing volume and turnover as null, not as whatever the file holds in the slot', async () => {
    const t0 = Date.UTC(2026, 2, 2, 10, 0);
    await write(format, [
      [
        { ...bar('BTCUSDT', 1, t0), volume: null, turnover: null },
        { ...bar('BTCUSDT', 1, t0 + MIN), volume: 133, turnover: 7 },
        { ...bar('BTCUSDT', 1, t0 + 2 * MIN), volume: null },
      ],
    ]);
    const bars = await readKlineBars(dir);
    expect(bars.map((b) => [b.volume, b.turnover])).toEqual([
      [null, null],
      [133, 7],
      [null, 15],
    ]);
    expect(bars[1]!.readAtMs).toBe(t0 + MIN + DAY);
  });
});

describe('inspectDataset', () => {
  it('reports a gap in a stock series inside a session, and refuses a path that is not a directory', async () => {
    const open = Date.UTC(2026, 2, 3, 14, 30); // Tuesday, New York open (EST)
    await write('ndjson', [[bar('AAPL.US', 1, open), bar('AAPL.US', 1, open + 61 * MIN)]]);
    const { kline } = await inspectDataset(dir);
    expect(kline.series[0]?.gaps).toEqual([{ fromMs: open + MIN, toMs: open + 61 * MIN, bars: 60 }]);
    await expect(inspectDataset(join(dir, 'nope'))).rejects.toMatchObject({ code: 'QF_PIPELINE_CONFIG' });
  });
});

describe('inspectDataset of depth and suspension datasets', () => {
  it.each<DatasetFormat>(['parquet', 'ndjson'])(
    'summarizes depth codes and suspension exchanges (%s)',
    async (format) => {
      const writer = new DatasetWriter({ dir, format });
      const tick = (code: string, seq: bigint, tickTimeMs: number) =>
        writer.append({ type: 'depth', code, seq, tickTimeMs, bids: [], asks: [] });
      tick('BTCUSDT', 5n, Date.UTC(2026, 10, 2, 10));
      tick('BTCUSDT', 18_446_744_073_709_551_615n, Date.UTC(2026, 10, 2, 10, 1));
      tick('BTCUSDT', 5n, Date.UTC(2026, 10, 2, 10, 2));
      tick('700.HK', 7n, Date.UTC(2026, 10, 2, 2));
      const halt = (symbol: string, haltAtMs: number, resumeAtMs: number | undefined) =>
        writer.append(suspension(symbol, { haltAtMs, resumeAtMs, publishAtMs: haltAtMs + 1_000 }));
      halt('ABCD', Date.UTC(2026, 10, 2, 15), Date.UTC(2026, 10, 2, 15, 5));
      halt('ABCD', Date.UTC(2026, 10, 3, 15), undefined);
      halt('WXYZ', Date.UTC(2026, 10, 4, 15), undefined);
      await writer.close();
      const inspection = await inspectDataset(dir);
      expect(inspection.kline.series).toEqual([]);
      expect(inspection.depth.codes).toEqual([
        {
          code: '700.HK',
          ticks: 1,
          firstMs: Date.UTC(2026, 10, 2, 2),
          lastMs: Date.UTC(2026, 10, 2, 2),
          firstSeq: '7',
          lastSeq: '7',
          repeatedSeq: 0,
        },
        {
          code: 'BTCUSDT',
          ticks: 3,
          firstMs: Date.UTC(2026, 10, 2, 10),
          lastMs: Date.UTC(2026, 10, 2, 10, 2),
          firstSeq: '5',
          lastSeq: '18446744073709551615',
          repeatedSeq: 1,
        },
      ]);
      expect(inspection.suspension.exchanges).toEqual([
        {
          exchange: 'nyse',
          records: 3,
          symbols: 2,
          open: 2,
          firstMs: Date.UTC(2026, 10, 2, 15, 0, 1),
          lastMs: Date.UTC(2026, 10, 4, 15, 0, 1),
        },
      ]);
    },
  );
});
