import { type Clock, type KlineType, systemClock } from '@quoteflow/core';
import { inspectDataset, readKlineBars, type DatasetBar, type SeriesInspection } from '@quoteflow/pipelines';
import { clipGap, readHalts, readSeriesStarts, type DatasetHalt } from '@quoteflow/pipelines/internal';
import { listDataFiles } from '@quoteflow/sinks/internal';
import { barEndMs, coverageGrid, coverageOf, type Coverage, type HeldBars } from './coverage.js';
import { KlineScan, type HeatmapGrid } from './duckdb-scan.js';
import { candlesOf, periodOf, type Candle, type CandleList } from './candles.js';
import { readQuotaData, type QuotaData } from './quota-data.js';

/** What {@link collectReportData} reads. */
export interface ReportOptions {
  /** Only these codes (default: every code of the dataset). */
  readonly codes?: readonly string[];
  /** Bars starting at or after this instant (epoch ms; default: the dataset's first bar). */
  readonly fromMs?: number;
  /** Bars starting before this instant (epoch ms; default: after the dataset's last bar). */
  readonly toMs?: number;
  /** Series whose candles the page carries (the first ones in order). @defaultValue 50 */
  readonly maxCandleSeries?: number;
  /**
   * Candles per series at most: one per bar of the series' own period, the newest ones (a longer
   * series shows its latest bars; `fromMs`/`toMs` pick others). @defaultValue 5,000
   */
  readonly maxCandles?: number;
  /** Heatmap columns at most. @defaultValue 720 */
  readonly maxBuckets?: number;
  /** "Now" for freshness. @defaultValue the system clock */
  readonly clock?: Clock;
  /**
   * How the rows are read: `'duckdb'` aggregates Parquet files in place (memory stays flat at 10,000
   * series × a month of 1-minute bars); `'js'` reads them row by row (every format); `'auto'` takes
   * DuckDB when every kline file is Parquet. @defaultValue 'auto'
   */
  readonly engine?: 'auto' | 'duckdb' | 'js';
}

/** One line of the summary table. */
export interface SeriesSummary {
  readonly code: string;
  readonly klineType: KlineType;
  readonly rows: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly gaps: number;
  /** Bars the calendar expected in the gaps. */
  readonly missingBars: number;
  /** Halts of the code in the dataset's suspension records that overlap its bars' span. */
  readonly halts: number;
  /** When the newest bar's values were read (epoch ms), if the files say. */
  readonly lastReadMs: number | undefined;
  /** Now minus `lastReadMs`, ms. */
  readonly freshnessMs: number | undefined;
}

/** Candles of one series: `[tsSeconds, open, high, low, close, volume]` per candle. */
export interface SeriesCandles {
  readonly code: string;
  readonly klineType: KlineType;
  /** Length of one candle (ms): the series' bar period (a day for daily and longer bars). */
  readonly candleMs: number;
  /** Bars of the series in the report's range; more than `candles` when only the newest are carried. */
  readonly bars: number;
  readonly candles: readonly Candle[];
  /** Gaps to mark on the chart, `[fromSeconds, toSeconds]`. */
  readonly gaps: readonly (readonly [number, number])[];
}

/**
 * The heatmap of one kline type: its series over their own span (or the report's window), in cells
 * of a whole number of its own period, so 1-minute series stay readable beside years of daily ones.
 */
export interface CoveragePanel extends Coverage {
  readonly klineType: KlineType;
}

/** Everything the page shows, inlined into it as JSON. */
export interface ReportData {
  readonly dir: string;
  readonly generatedAtMs: number;
  readonly files: { readonly kline: number; readonly depth: number; readonly suspension: number };
  readonly summary: readonly SeriesSummary[];
  /** One heatmap per kline type of the dataset, shortest period first. */
  readonly coverage: readonly CoveragePanel[];
  readonly candles: readonly SeriesCandles[];
  /** From the request logs beside the dataset (`--request-log`), if any. */
  readonly quota: QuotaData | undefined;
}

/** Reads what the page shows from the dataset under `dir` (no request). */
export async function collectReportData(dir: string, options: ReportOptions = {}): Promise<ReportData> {
  const now = (options.clock ?? systemClock).now();
  const range = {
    ...(options.codes === undefined ? {} : { codes: options.codes }),
    ...(options.fromMs === undefined ? {} : { fromMs: options.fromMs }),
    ...(options.toMs === undefined ? {} : { toMs: options.toMs }),
  };
  const halts = await readHalts(dir);
  const klineFiles = await listDataFiles(dir, 'kline');
  const engine = options.engine ?? 'auto';
  // DuckDB reads each path as a glob: one with glob characters in it goes row by row.
  const useDuckDb =
    klineFiles.length > 0 &&
    (engine === 'duckdb' ||
      (engine === 'auto' &&
        klineFiles.every((f) => f.endsWith('.parquet')) &&
        !/[*?[\]{}]/.test(dir + klineFiles.join(''))));
  const source = useDuckDb
    ? await duckDbSource(dir, klineFiles, range, halts, now, options.maxBuckets)
    : await rowSource(dir, range, now);
  try {
    const { series } = source;
    const haltsOf = (s: { code: string; firstMs: number; lastMs: number }) =>
      halts.filter((h) => h.code === s.code && h.fromMs <= s.lastMs && (h.toMs ?? Infinity) > s.firstMs);
    const candleSeries = series.slice(0, options.maxCandleSeries ?? 50);
    const candlesBySeries = await source.candles(candleSeries, options.maxCandles ?? 5_000);
    const summary = series.map((s): SeriesSummary => ({
      code: s.code,
      klineType: s.klineType,
      rows: s.rows,
      firstMs: s.firstMs,
      lastMs: s.lastMs,
      gaps: s.gaps.length,
      missingBars: s.gaps.reduce((n, g) => n + g.bars, 0),
      halts: haltsOf(s).length,
      lastReadMs: s.lastReadMs,
      freshnessMs: s.lastReadMs === undefined ? undefined : now - s.lastReadMs,
    }));
    const candles = candleSeries.map((s) => {
      const { candleMs, candles: list } = candlesBySeries.get(`${s.code}\u0000${s.klineType}`) ?? {
        candleMs: periodOf(s.klineType),
        candles: [],
      };
      return {
        code: s.code,
        klineType: s.klineType,
        candleMs,
        bars: s.rows,
        candles: list,
        gaps: s.gaps.map((g) => [Math.floor(g.fromMs / 1000), Math.floor(g.toMs / 1000)] as const),
      };
    });
    return {
      dir,
      generatedAtMs: now,
      files: {
        kline: klineFiles.length,
        depth: (await listDataFiles(dir, 'depth')).length,
        suspension: (await listDataFiles(dir, 'suspension')).length,
      },
      summary,
      coverage: source.grids.map(({ klineType, fromMs, toMs }) => ({
        klineType,
        ...coverageOf(
          series.filter((s) => s.klineType === klineType),
          source.heldOf,
          haltsOf,
          fromMs,
          toMs,
          options.maxBuckets ?? 720,
        ),
      })),
      candles,
      quota: await readQuotaData(dir),
    };
  } finally {
    source.close();
  }
}

/** Where the report's rows come from: what every series holds, and whole rows for the candles. */
interface SeriesSource {
  readonly series: readonly (SeriesInspection & { readonly lastReadMs: number | undefined })[];
  /** The heatmap's span per kline type, shortest period first. */
  readonly grids: readonly PanelSpan[];
  /** The bars a series holds in its panel of the heatmap: their starts, or the buckets they cover. */
  readonly heldOf: (s: { code: string; klineType: KlineType }) => HeldBars;
  /** Candles of these series (keyed `code\u0000klineType`), the newest `maxCandles` bars of each. */
  candles(series: readonly CandleSeries[], maxCandles: number): Promise<Map<string, CandleList>>;
  close(): void;
}

type Range = Pick<ReportOptions, 'codes' | 'fromMs' | 'toMs'>;
type SeriesKey = { readonly code: string; readonly klineType: KlineType };
type CandleSeries = SeriesKey & { readonly rows: number; readonly firstMs: number; readonly lastMs: number };

/**
 * A series of the whole dataset seen through a time window: its rows, first and last bar and
 * duplicates from the window's starts, its gaps cut to the window (a gap crossing an edge counts
 * the bars of its part inside).
 */
function inWindow(s: SeriesInspection, windowStarts: readonly number[], range: Range): SeriesInspection {
  const sorted = [...windowStarts].sort((a, b) => a - b);
  const fromMs = range.fromMs ?? -Infinity;
  const toMs = range.toMs ?? Infinity;
  return {
    code: s.code,
    klineType: s.klineType,
    rows: sorted.length,
    duplicates: sorted.filter((t, i) => i > 0 && sorted[i - 1] === t).length,
    firstMs: sorted[0]!,
    lastMs: sorted.at(-1)!,
    gaps: s.gaps.flatMap((g) => clipGap(s.code, s.klineType, g, fromMs, toMs) ?? []),
  };
}

/** The span of one kline type's panel of the heatmap. */
interface PanelSpan {
  readonly klineType: KlineType;
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The heatmap's panels, one per kline type, shortest period first: each from the first bar to the
 * end of the last of its own series (the options' window where given). One span for every type
 * sized the cells by the longest history: 1-minute rows were slivers beside years of daily bars.
 */
function panelSpans(
  series: readonly { klineType: KlineType; firstMs: number; lastMs: number }[],
  range: Range,
  now: number,
): PanelSpan[] {
  const types = [...new Set(series.map((s) => s.klineType))].sort((a, b) => a - b);
  return types.map((klineType) => {
    const own = series.filter((s) => s.klineType === klineType);
    const fromMs = range.fromMs ?? Math.min(...own.map((s) => s.firstMs), now);
    // To the end of the last bar by its own period (a weekly bar's whole week).
    const toMs = range.toMs ?? Math.max(...own.map((s) => barEndMs(klineType, s.lastMs)), fromMs + 1);
    return { klineType, fromMs, toMs };
  });
}

/**
 * Parquet datasets: DuckDB aggregates the files in place (see {@link KlineScan}), so 10,000 series
 * × a month of 1-minute bars never pass through JavaScript row by row. Series and gaps are those
 * of the range.
 */
async function duckDbSource(
  dir: string,
  files: readonly string[],
  range: Range,
  halts: readonly DatasetHalt[],
  now: number,
  maxBuckets: number | undefined,
): Promise<SeriesSource> {
  const scan = await KlineScan.open(dir, files, range);
  try {
    const span = await scan.span();
    const grids = panelSpans(span, range, now);
    const panels = new Map<KlineType, HeatmapGrid>(
      grids.map((g) => [
        g.klineType,
        { fromMs: g.fromMs, ...coverageGrid([g], g.fromMs, g.toMs, maxBuckets) },
      ]),
    );
    // The scan's slices are sized by the whole span, at the finest panel's cells.
    const fromMs = grids.length === 0 ? now : Math.min(...grids.map((g) => g.fromMs));
    const toMs = grids.length === 0 ? now + 1 : Math.max(...grids.map((g) => g.toMs));
    const { bucketMs, buckets } = coverageGrid(span, fromMs, toMs, maxBuckets);
    const series = await scan.series(fromMs, bucketMs, buckets, halts, (t) => panels.get(t)!);
    const byKey = new Map(series.map((s) => [`${s.code}\u0000${s.klineType}`, s]));
    return {
      series,
      grids,
      // One start per bucket held: all the heatmap needs to mark it.
      heldOf: (s) => ({ buckets: byKey.get(`${s.code}\u0000${s.klineType}`)?.heldBuckets ?? [] }),
      candles: (wanted, maxCandles) => scan.candles(wanted, maxCandles),
      close: () => scan.close(),
    };
  } catch (error) {
    scan.close();
    throw error;
  }
}

/**
 * Arrow IPC and NDJSON datasets (and `engine: 'js'`): starts and read instants of every series
 * (three columns, no row objects), whole rows only for the candle series. Without a time range,
 * inspect's gaps come from the same starts (one pass over the files, not two).
 */
async function rowSource(dir: string, range: Range, now: number): Promise<SeriesSource> {
  const starts = await readSeriesStarts(dir, range);
  const whole = range.fromMs === undefined && range.toMs === undefined;
  const inspection = await inspectDataset(dir, whole ? { starts } : {});
  const wanted = range.codes === undefined ? undefined : new Set(range.codes);
  const keyOf = (s: { code: string; klineType: KlineType }) => `${s.code}\u0000${s.klineType}`;
  const series = inspection.kline.series
    .filter((s) => (wanted === undefined || wanted.has(s.code)) && starts.has(keyOf(s)))
    .map((s) => ({
      ...(whole ? s : inWindow(s, starts.get(keyOf(s))!.starts, range)),
      lastReadMs: starts.get(keyOf(s))?.lastReadMs,
    }));
  return {
    series,
    grids: panelSpans(series, range, now),
    heldOf: (s) => ({ starts: starts.get(keyOf(s))?.starts ?? [] }),
    candles: async (chosen, maxCandles) => {
      const out = new Map<string, CandleList>();
      if (chosen.length === 0) return out;
      const keys = new Set(chosen.map(keyOf));
      const bars = await readKlineBars(dir, { ...range, codes: [...new Set(chosen.map((s) => s.code))] });
      const bySeries = new Map<string, DatasetBar[]>();
      for (const bar of bars) {
        const key = keyOf(bar);
        if (!keys.has(key)) continue;
        let list = bySeries.get(key);
        if (list === undefined) bySeries.set(key, (list = []));
        list.push(bar);
      }
      for (const [key, list] of bySeries)
        out.set(key, { candleMs: periodOf(list[0]!.klineType), candles: candlesOf(list, maxCandles) });
      return out;
    },
    close: () => undefined,
  };
}
