import { KLINE_PERIOD_MS, type Clock, type KlineType, systemClock } from '@quoteflow/core';
import {
  inspectDataset,
  readHalts,
  readKlineBars,
  readSeriesStarts,
  type DatasetBar,
} from '@quoteflow/pipelines';
import { coverageOf, type Coverage } from './coverage.js';
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
  /** Candles per series at most; longer series are shown in coarser candles. @defaultValue 2,000 */
  readonly maxCandles?: number;
  /** Heatmap columns at most. @defaultValue 720 */
  readonly maxBuckets?: number;
  /** "Now" for freshness. @defaultValue the system clock */
  readonly clock?: Clock;
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
  /** Length of one candle (ms): the bar period, or a multiple of it for long series. */
  readonly candleMs: number;
  readonly candles: readonly (readonly [number, number, number, number, number, number])[];
  /** Gaps to mark on the chart, `[fromSeconds, toSeconds]`. */
  readonly gaps: readonly (readonly [number, number])[];
}

/** Everything the page shows, inlined into it as JSON. */
export interface ReportData {
  readonly dir: string;
  readonly generatedAtMs: number;
  readonly files: { readonly kline: number; readonly depth: number; readonly suspension: number };
  readonly summary: readonly SeriesSummary[];
  readonly coverage: Coverage;
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
  // Starts and read instants of every series (three columns, no row objects); whole rows only for
  // the series whose candles the page carries: 10,000 series stay within memory. Without a time
  // range, inspect's gaps come from the same starts (one pass over the files, not two).
  const starts = await readSeriesStarts(dir, range);
  const whole = options.fromMs === undefined && options.toMs === undefined;
  const inspection = await inspectDataset(dir, whole ? { starts } : {});
  const codes = options.codes === undefined ? undefined : new Set(options.codes);
  const series = inspection.kline.series.filter((s) => codes === undefined || codes.has(s.code));
  const startsOf = (s: { code: string; klineType: KlineType }) =>
    starts.get(`${s.code}\u0000${s.klineType}`)?.starts ?? [];
  const candleSeries = series.slice(0, options.maxCandleSeries ?? 50);
  const bySeries = new Map<string, DatasetBar[]>();
  if (candleSeries.length > 0) {
    const candleKeys = new Set(candleSeries.map((s) => `${s.code}\u0000${s.klineType}`));
    const bars = await readKlineBars(dir, { ...range, codes: [...new Set(candleSeries.map((s) => s.code))] });
    for (const bar of bars) {
      const key = `${bar.code}\u0000${bar.klineType}`;
      if (!candleKeys.has(key)) continue;
      let list = bySeries.get(key);
      if (list === undefined) bySeries.set(key, (list = []));
      list.push(bar);
    }
  }
  const barsOf = (s: { code: string; klineType: KlineType }) =>
    bySeries.get(`${s.code}\u0000${s.klineType}`) ?? [];
  const halts = await readHalts(dir);
  const haltsOf = (s: { code: string; firstMs: number; lastMs: number }) =>
    halts.filter((h) => h.code === s.code && h.fromMs <= s.lastMs && (h.toMs ?? Infinity) > s.firstMs);
  const fromMs = options.fromMs ?? Math.min(...series.map((s) => s.firstMs), now);
  const toMs =
    options.toMs ??
    Math.max(...series.map((s) => s.lastMs + (KLINE_PERIOD_MS[s.klineType] ?? 86_400_000)), fromMs + 1);
  const summary = series.map((s): SeriesSummary => {
    const lastReadMs = starts.get(`${s.code}\u0000${s.klineType}`)?.lastReadMs;
    return {
      code: s.code,
      klineType: s.klineType,
      rows: s.rows,
      firstMs: s.firstMs,
      lastMs: s.lastMs,
      gaps: s.gaps.length,
      missingBars: s.gaps.reduce((n, g) => n + g.bars, 0),
      halts: haltsOf(s).length,
      lastReadMs,
      freshnessMs: lastReadMs === undefined ? undefined : now - lastReadMs,
    };
  });
  const maxCandles = options.maxCandles ?? 2_000;
  const candles = candleSeries.map((s) => {
    const list = barsOf(s);
    const period = KLINE_PERIOD_MS[s.klineType] ?? 86_400_000;
    const span = list.length === 0 ? 0 : list.at(-1)!.tsMs - list[0]!.tsMs + period;
    // Daily and longer bars stay one candle each (their lengths differ); intraday ones coarsen.
    const candleMs =
      KLINE_PERIOD_MS[s.klineType] === undefined || list.length <= maxCandles
        ? period
        : Math.ceil(span / maxCandles / period) * period;
    return {
      code: s.code,
      klineType: s.klineType,
      candleMs,
      candles: candlesOf(list, candleMs, candleMs === period),
      gaps: s.gaps.map((g) => [Math.floor(g.fromMs / 1000), Math.floor(g.toMs / 1000)] as const),
    };
  });
  return {
    dir,
    generatedAtMs: now,
    files: {
      kline: inspection.kline.files,
      depth: inspection.depth.files,
      suspension: inspection.suspension.files,
    },
    summary,
    coverage: coverageOf(series, startsOf, haltsOf, fromMs, toMs, options.maxBuckets ?? 720),
    candles,
    quota: await readQuotaData(dir),
  };
}

/** One candle per bar, or bars folded into `candleMs` buckets (first open, extremes, last close, summed volume). */
function candlesOf(
  bars: readonly DatasetBar[],
  candleMs: number,
  onePerBar: boolean,
): [number, number, number, number, number, number][] {
  const out: [number, number, number, number, number, number][] = [];
  for (const b of bars) {
    const start = onePerBar ? b.tsMs : Math.floor(b.tsMs / candleMs) * candleMs;
    const t = Math.floor(start / 1000);
    const last = out.at(-1);
    if (last !== undefined && last[0] === t) {
      last[2] = Math.max(last[2], b.high);
      last[3] = Math.min(last[3], b.low);
      last[4] = b.close;
      last[5] += b.volume ?? 0;
    } else out.push([t, b.open, b.high, b.low, b.close, b.volume ?? 0]);
  }
  return out;
}
