import { stat } from 'node:fs/promises';
import { calendarOf, isKlineType, type KlineType, type TradingCalendar } from '@quoteflow/core';
import { barsMissingBetween } from '@quoteflow/core/internal';
import { expectedBarsBetween, haltExplainsGap } from '@quoteflow/operators/internal';
import { PipelineError } from './pipeline-error.js';
import { listDataFiles, readKlineStarts } from '@quoteflow/sinks/internal';
import { missingCommittedFiles } from './missing-committed-files.js';
import { readHalts, type DatasetHalt } from './read-halts.js';
import {
  inspectDepth,
  inspectSuspensions,
  type DepthCodeInspection,
  type SuspensionExchangeInspection,
} from './inspect-records.js';
import type { SeriesStarts } from './read-kline-bars.js';

/** Bars missing from a series that the market calendar does not explain. */
export interface SeriesGap {
  /** Start of the first missing bar (epoch ms). */
  readonly fromMs: number;
  /** Start of the next bar the dataset holds (epoch ms): the gap is [fromMs, toMs). */
  readonly toMs: number;
  /** Bars the calendar expects in the gap (an estimate under one labelling of bar times). */
  readonly bars: number;
}

/** What the dataset holds of one (code, kline type). */
export interface SeriesInspection {
  readonly code: string;
  readonly klineType: KlineType;
  readonly rows: number;
  /** Rows whose (code, kline type, ts) another row already has: 0 in a healthy dataset. */
  readonly duplicates: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly gaps: readonly SeriesGap[];
}

/** Options of {@link inspectDataset}. */
export interface InspectDatasetOptions {
  /**
   * The kline series' starts already read with `readSeriesStarts(dir)` (every row of the series
   * it holds, no range): inspected instead of reading the files again. Only those series are
   * inspected.
   */
  readonly starts?: ReadonlyMap<string, SeriesStarts>;
}

/** What {@link inspectDataset} finds under `--out DIR`. */
export interface DatasetInspection {
  readonly kline: {
    readonly files: number;
    readonly series: readonly SeriesInspection[];
    /** Files the dataset's commit log names that are gone from `dir` ({@link missingCommittedFiles}). */
    readonly missingFiles: readonly string[];
  };
  /** Per code: ticks, first and last tick time and seq. */
  readonly depth: { readonly files: number; readonly codes: readonly DepthCodeInspection[] };
  /** Per exchange: records, symbols, open halts, first and last publish date. */
  readonly suspension: {
    readonly files: number;
    readonly exchanges: readonly SuspensionExchangeInspection[];
  };
}

/**
 * What a dataset directory holds, read from its files alone (no request): per (code, kline type)
 * the rows, first and last bar, duplicates, and the gaps between consecutive bars that the market
 * calendar does not explain (weekends, holidays, lunch breaks and the forex weekly pause are not
 * gaps; core's `barsMissingBetween` decides, under every labelling), nor a halt of the code in the
 * dataset's own suspension records that spans the hole; per depth code the ticks, first and last
 * tick time and seq; per suspension exchange the records, symbols and open halts; per dataset the
 * file count, and the kline files its commit log names that are gone.
 *
 * @throws PipelineError `QF_PIPELINE_CONFIG` when `dir` is not a directory.
 * @example
 * ```ts
 * const { kline } = await inspectDataset('./data');
 * for (const s of kline.series) if (s.gaps.length > 0) console.log(s.code, s.klineType, s.gaps);
 * ```
 */
export async function inspectDataset(
  dir: string,
  options: InspectDatasetOptions = {},
): Promise<DatasetInspection> {
  const info = await stat(dir).catch(() => undefined);
  if (info?.isDirectory() !== true)
    throw new PipelineError(
      'QF_PIPELINE_CONFIG',
      `inspectDataset: ${JSON.stringify(dir)} is not a directory`,
    );
  const klineFiles = await listDataFiles(dir, 'kline');
  const startsBySeries: ReadonlyMap<string, { code: string; klineType: KlineType; starts: number[] }> =
    options.starts ?? (await readStarts(dir, klineFiles));
  const halts = await readHalts(dir);
  const series = [...startsBySeries.values()]
    .map(({ code, klineType, starts }) =>
      inspectSeries(
        code,
        klineType,
        starts,
        halts.filter((h) => h.code === code),
      ),
    )
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : a.klineType - b.klineType));
  return {
    kline: { files: klineFiles.length, series, missingFiles: await missingCommittedFiles(dir) },
    depth: { files: (await listDataFiles(dir, 'depth')).length, codes: await inspectDepth(dir) },
    suspension: {
      files: (await listDataFiles(dir, 'suspension')).length,
      exchanges: await inspectSuspensions(dir),
    },
  };
}

/** Every kline series' starts, file by file (code and ts columns only). */
async function readStarts(
  dir: string,
  klineFiles: readonly string[],
): Promise<Map<string, { code: string; klineType: KlineType; starts: number[] }>> {
  const startsBySeries = new Map<string, { code: string; klineType: KlineType; starts: number[] }>();
  for (const rel of klineFiles) {
    const { klineType, starts } = await readKlineStarts(dir, rel);
    if (!isKlineType(klineType)) continue;
    for (const [code, list] of starts) {
      const key = `${code}\u0000${klineType}`;
      let entry = startsBySeries.get(key);
      if (entry === undefined) startsBySeries.set(key, (entry = { code, klineType, starts: [] }));
      for (const ms of list) entry.starts.push(ms);
    }
  }
  return startsBySeries;
}

function inspectSeries(
  code: string,
  klineType: KlineType,
  starts: number[],
  halts: readonly DatasetHalt[],
): SeriesInspection {
  starts.sort((a, b) => a - b);
  const calendar = calendarOf(code);
  const gaps: SeriesGap[] = [];
  let duplicates = 0;
  for (let i = 1; i < starts.length; i++) {
    const a = starts[i - 1]!;
    const b = starts[i]!;
    if (a === b) {
      duplicates++;
      continue;
    }
    const gap = unexplainedGap(code, klineType, a, b, halts, calendar);
    if (gap !== undefined) gaps.push(gap);
  }
  return {
    code,
    klineType,
    rows: starts.length,
    duplicates,
    firstMs: starts[0]!,
    lastMs: starts.at(-1)!,
    gaps,
  };
}

/**
 * The gap between two consecutive bar starts `a < b` of a series that neither the market calendar
 * (under every labelling) nor a halt in `halts` (the dataset's suspension records) explains, if any:
 * what {@link inspectDataset} reports, for readers that find consecutive starts another way.
 */
export function unexplainedGap(
  code: string,
  klineType: KlineType,
  a: number,
  b: number,
  halts: readonly DatasetHalt[],
  calendar: TradingCalendar = calendarOf(code),
): SeriesGap | undefined {
  if (!barsMissingBetween(a, b, klineType, calendar)) return undefined;
  if (haltExplainsGap(halts, code, klineType, a, b)) return undefined;
  const expected = expectedBarsBetween(code, klineType, a, b);
  return { fromMs: expected.firstMs ?? a, toMs: b, bars: Math.max(1, expected.count) };
}

/**
 * The part of `gap` inside the window `[fromMs, toMs)`, with the bars the calendar expects there
 * (`undefined` when none is): how a report over a time window counts a gap that crosses its edge.
 */
export function clipGap(
  code: string,
  klineType: KlineType,
  gap: SeriesGap,
  fromMs: number,
  toMs: number,
): SeriesGap | undefined {
  if (gap.fromMs >= fromMs && gap.toMs <= toMs) return gap;
  const start = Math.max(gap.fromMs, fromMs);
  const end = Math.min(gap.toMs, toMs);
  if (end <= start) return undefined;
  const inside = expectedBarsBetween(code, klineType, start - 1, end);
  return inside.count === 0 || inside.firstMs === undefined
    ? undefined
    : { fromMs: inside.firstMs, toMs: end, bars: inside.count };
}
