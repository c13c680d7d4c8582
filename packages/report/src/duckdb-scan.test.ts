import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, type Bar, type KlineType } from '@quoteflow/core';
import { DatasetWriter } from '@quoteflow/sinks';
import { listDataFiles } from '@quoteflow/sinks/internal';
import { KlineScan } from './duckdb-scan.js';
import { collectReportData, type ReportOptions } from './report-data.js';

const START = Date.UTC(2026, 9, 5, 13); // a Monday, 13:00 UTC: inside New York's session soon after
const STEP: Record<number, number> = {
  1: 60_000,
  2: 300_000,
  5: 3_600_000,
  8: 86_400_000,
  9: 7 * 86_400_000,
};
const CODES = ['BTCUSDT', 'AAPL.US', 'EURUSD', '700.HK'];

interface SeriesSpec {
  readonly code: string;
  readonly klineType: KlineType;
  /** Bar indexes held (k × the type's step after START), before duplicates and misalignments. */
  readonly held: readonly number[];
  readonly duplicates: readonly number[];
  /** Indexes whose bar starts 30 s late (a writer that went wrong): a pair the contiguity check must not trust. */
  readonly shifted: readonly number[];
}

const seriesSpec = fc.record({
  code: fc.constantFrom(...CODES),
  klineType: fc.constantFrom<KlineType>(1, 2, 5, 8, 9),
  held: fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 300 }),
  duplicates: fc.array(fc.nat(400), { maxLength: 3 }),
  shifted: fc.array(fc.nat(400), { maxLength: 2 }),
});

async function writeDataset(
  dir: string,
  specs: readonly SeriesSpec[],
  maxRowsPerFile?: number,
): Promise<void> {
  const writer = new DatasetWriter({
    dir,
    format: 'parquet',
    ...(maxRowsPerFile === undefined ? {} : { maxRowsPerFile }),
  });
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(`${s.code}:${s.klineType}`)) continue;
    seen.add(`${s.code}:${s.klineType}`);
    const held = new Set(s.held);
    for (const k of [...held, ...s.duplicates.filter((d) => held.has(d))]) {
      const tsMs = START + k * STEP[s.klineType]! + (s.shifted.includes(k) ? 30_000 : 0);
      const bar: Bar = {
        type: 'bar',
        code: s.code,
        klineType: s.klineType,
        tsMs,
        open: 10 + (k % 7),
        high: 20,
        low: 5,
        close: 11,
        volume: k % 3 === 0 ? null : k,
        turnover: 1,
        readAtMs: tsMs + 1_000 * (k % 11),
        receivedAtMs: tsMs + 1_000 * (k % 11) + 1,
      };
      writer.append(bar);
    }
  }
  await writer.close();
}

describe('report on DuckDB', () => {
  it('finds the same series, gaps, duplicates, heatmap and candles as the row-by-row reader', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(seriesSpec, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 3, max: 60 }),
        // Sometimes a time window (in minutes after START), which gaps may cross.
        fc.option(fc.tuple(fc.nat(400 * 60), fc.integer({ min: 1, max: 400 * 60 })), { nil: undefined }),
        async (specs, maxBuckets, window) => {
          const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
          try {
            await writeDataset(dir, specs);
            const options: ReportOptions = {
              clock: new ManualClock(START + 500 * 86_400_000),
              maxBuckets,
              ...(window === undefined
                ? {}
                : { fromMs: START + window[0] * 60_000, toMs: START + (window[0] + window[1]) * 60_000 }),
            };
            const rows = await collectReportData(dir, { ...options, engine: 'js' });
            const duck = await collectReportData(dir, { ...options, engine: 'duckdb' });
            expect(duck.summary).toEqual(rows.summary);
            expect(duck.coverage).toEqual(rows.coverage);
            expect(duck.candles).toEqual(rows.candles);
            expect(duck.files).toEqual(rows.files);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);

  it.each([3, 300])('sees a duplicate that hides a missing bar in a bucket of %i bars', async (bars) => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
    try {
      // Bars 0..bars-1 but bar 1, with bar 2 twice: as many rows as bars, one bucket.
      const held = Array.from({ length: bars }, (_, k) => k).filter((k) => k !== 1);
      await writeDataset(dir, [{ code: 'BTCUSDT', klineType: 1, held, duplicates: [2], shifted: [] }]);
      const data = await collectReportData(dir, { engine: 'duckdb', maxBuckets: 1 });
      expect(data.coverage[0]!.buckets).toBe(1);
      expect(data.summary).toEqual([expect.objectContaining({ rows: bars, gaps: 1, missingBars: 1 })]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('agrees with the row-by-row reader over most of a year of 1-minute bars (large offsets)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
    try {
      // Sparse bars over 400,000 minutes, then 200 in a row in one heatmap bucket, one of them twice.
      const held = [
        ...Array.from({ length: 300 }, (_, k) => k * 1_331),
        ...Array.from({ length: 200 }, (_, k) => 400_000 + k),
      ];
      await writeDataset(dir, [{ code: 'BTCUSDT', klineType: 1, held, duplicates: [400_100], shifted: [] }]);
      const options: ReportOptions = { clock: new ManualClock(START + 500 * 86_400_000) };
      const rows = await collectReportData(dir, { ...options, engine: 'js' });
      const duck = await collectReportData(dir, { ...options, engine: 'duckdb' });
      expect(duck.summary).toEqual(rows.summary);
      expect(duck.coverage).toEqual(rows.coverage);
      expect(duck.candles).toEqual(rows.candles);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives each kline type a panel in cells of its own period, bars longer than a cell holding each cell they cover', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
    try {
      // 1-minute bars beside hourly ones with two holes (one of them 2 hours long) and a duplicate,
      // and weekly bars, which hold 7 cells of the day-wide cells of their panel.
      const hours = Array.from({ length: 30 }, (_, k) => k).filter((k) => k !== 7 && k !== 20 && k !== 21);
      await writeDataset(dir, [
        { code: 'BTCUSDT', klineType: 1, held: [0, 1, 2, 5, 6], duplicates: [], shifted: [] },
        { code: 'BTCUSDT', klineType: 5, held: hours, duplicates: [3], shifted: [] },
        { code: 'BTCUSDT', klineType: 9, held: [0, 1, 3], duplicates: [], shifted: [] },
      ]);
      const options: ReportOptions = { clock: new ManualClock(START + 500 * 86_400_000) };
      const rows = await collectReportData(dir, { ...options, engine: 'js' });
      const duck = await collectReportData(dir, { ...options, engine: 'duckdb' });
      expect(duck.coverage).toEqual(rows.coverage);
      expect(duck.summary).toEqual(rows.summary);
      // One bar a cell in each panel whose period is fixed, whatever spans the others have.
      expect(duck.coverage.map((p) => [p.klineType, p.bucketMs, p.fromMs])).toEqual([
        [1, STEP[1], START],
        [5, STEP[5], START],
        [9, 86_400_000, START],
      ]);
      const [minutes, hourly, weekly] = duck.coverage.map((p) => p.rows[0]!.cells);
      expect(minutes).toBe('hhhmmhh');
      expect(hourly).toBe(`${'h'.repeat(7)}m${'h'.repeat(12)}mm${'h'.repeat(8)}`);
      // A 24/7 code: no cell of its span is "closed". A held week holds every day to its end (these
      // start on Mondays at 13:00 and end at the next Monday's midnight, in that day's cell); the
      // missing bars' cells are missing, the cell a held bar shares with the hole too.
      expect(weekly).toBe(`${'h'.repeat(13)}${'m'.repeat(8)}${'h'.repeat(7)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('finds the same in batches of one file as in one batch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(seriesSpec, { minLength: 1, maxLength: 3 }), async (specs) => {
        const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
        try {
          await writeDataset(dir, specs, 7);
          const files = await listDataFiles(dir, 'kline');
          const scanIn = async (batchRows: number) => {
            const scan = await KlineScan.open(dir, files, {}, batchRows);
            try {
              const [first, last] = [START, START + 401 * STEP[9]!];
              return await scan.series(first, (last - first) / 50, 50, []);
            } finally {
              scan.close();
            }
          };
          fc.pre(files.length > 1);
          expect(await scanIn(1)).toEqual(await scanIn(1e9));
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 10 },
    );
  }, 120_000);

  it("counts the part inside the window of gaps that cross the window's edges", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
    try {
      // Bars 0..399 but 100..219 (120 missing) and 300..349 (50); the window holds 150..319.
      const held = Array.from({ length: 400 }, (_, k) => k).filter(
        (k) => !(k >= 100 && k < 220) && !(k >= 300 && k < 350),
      );
      await writeDataset(dir, [{ code: 'BTCUSDT', klineType: 1, held, duplicates: [], shifted: [] }]);
      const options: ReportOptions = {
        fromMs: START + 150 * 60_000,
        toMs: START + 320 * 60_000,
        clock: new ManualClock(START + 500 * 60_000),
      };
      for (const engine of ['duckdb', 'js'] as const) {
        const data = await collectReportData(dir, { ...options, engine });
        expect(data.summary, engine).toEqual([
          expect.objectContaining({
            rows: 80,
            firstMs: START + 220 * 60_000,
            lastMs: START + 299 * 60_000,
            gaps: 2,
            missingBars: 70 + 20,
          }),
        ]);
        expect(data.coverage[0]!.bucketMs).toBe(60_000);
        expect(data.coverage[0]!.rows[0]!.cells, engine).toBe(
          `${'m'.repeat(70)}${'h'.repeat(80)}${'m'.repeat(20)}`,
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads only the codes and the time range asked for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-duckdb-scan-'));
    try {
      const all = Array.from({ length: 120 }, (_, k) => k).filter((k) => k !== 30 && k !== 90);
      await writeDataset(dir, [
        { code: 'BTCUSDT', klineType: 1, held: all, duplicates: [], shifted: [] },
        { code: 'ETHUSDT', klineType: 1, held: all, duplicates: [], shifted: [] },
      ]);
      const data = await collectReportData(dir, {
        engine: 'duckdb',
        codes: ['BTCUSDT'],
        fromMs: START + 60 * 60_000,
        toMs: START + 100 * 60_000,
        clock: new ManualClock(START + 200 * 60_000),
      });
      expect(data.summary).toEqual([
        expect.objectContaining({
          code: 'BTCUSDT',
          rows: 39,
          firstMs: START + 60 * 60_000,
          lastMs: START + 99 * 60_000,
          gaps: 1,
          missingBars: 1,
        }),
      ]);
      expect(data.coverage.map((p) => p.rows.map((r) => r.cells))).toEqual([
        [`${'h'.repeat(30)}m${'h'.repeat(9)}`],
      ]);
      expect(data.candles[0]!.candles).toHaveLength(39);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
