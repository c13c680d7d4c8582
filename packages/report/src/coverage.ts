import { calendarOf, type KlineType } from '@quoteflow/core';
import { KLINE_PERIOD_MS, barFinalAfterMs } from '@quoteflow/core/internal';
import type { SeriesInspection } from '@quoteflow/pipelines';

/** What one heatmap cell shows (its character in {@link CoverageRow.cells}). */
export const CELL = {
  /** Outside the series' first and last bar. */
  outside: '.',
  /** The dataset holds a bar starting in the cell. */
  held: 'h',
  /** No bar, and the market calendar says none was due (closed, weekend, holiday, lunch break). */
  closed: 'c',
  /** Bars are due and missing: the cell overlaps a gap `inspect` reports. */
  missing: 'm',
  /** No bar while the code was halted (a suspension record of the dataset covers the cell). */
  halted: 'x',
} as const;

/** One row of the heatmap: a (code, kline type) and one character per time bucket. */
export interface CoverageRow {
  readonly code: string;
  readonly klineType: KlineType;
  readonly cells: string;
}

/**
 * The bars a series holds, for {@link coverageOf}: their starts, or the runs `[first, last]` of
 * heatmap buckets they cover (already by their period, as DuckDB's scan gives them).
 */
export type HeldBars =
  { readonly starts: readonly number[] } | { readonly buckets: readonly (readonly [number, number])[] };

/** Series × time, each cell one of {@link CELL}. */
export interface Coverage {
  readonly fromMs: number;
  readonly bucketMs: number;
  readonly buckets: number;
  readonly rows: readonly CoverageRow[];
}

const DAY_MS = 86_400_000;

/** Crypto's calendar, which never closes: on it core's `barFinalAfterMs` is where a bar ends. */
const AROUND_THE_CLOCK = calendarOf('BTCUSDT');

/**
 * Where a bar that starts at `startMs` ends, for the heatmap: its kline type's period; a day for a
 * daily bar, a week for a weekly one, the month for a monthly one. A held bar marks every cell it
 * covers, so an hourly bar in 3-minute cells is twenty held cells, not one held and nineteen closed.
 */
export function barEndMs(klineType: KlineType, startMs: number): number {
  return barFinalAfterMs(startMs, klineType, AROUND_THE_CLOCK);
}

/**
 * The heatmap's time buckets from `fromMs` to `toMs`: at most `maxBuckets`, each a whole number of
 * the shortest kline type's bar period (one bar per cell when that fits). Bucket `i` is
 * `[fromMs + i * bucketMs, fromMs + (i + 1) * bucketMs)`.
 */
export function coverageGrid(
  series: readonly { readonly klineType: KlineType }[],
  fromMs: number,
  toMs: number,
  maxBuckets = 720,
): { bucketMs: number; buckets: number } {
  const shortest = Math.min(...series.map((s) => KLINE_PERIOD_MS[s.klineType] ?? DAY_MS), DAY_MS);
  const bucketMs = Math.max(shortest, Math.ceil((toMs - fromMs) / maxBuckets / shortest) * shortest);
  return { bucketMs, buckets: Math.max(1, Math.ceil((toMs - fromMs) / bucketMs)) };
}

/**
 * The coverage heatmap of a dataset: time from `fromMs` to `toMs` cut into at most `maxBuckets`
 * buckets (one bar period of the shortest kline type when that fits, so a cell is a bar), each
 * row's cells marked from the bars held (every cell a bar covers, by its own period: see
 * {@link barEndMs}), the gaps `inspect` found and the code's halts
 * (suspension records: an empty cell in a halt is halted, not missing). A missing bar marks its
 * cell even when the cell also holds bars, so a hole stays visible at any zoom; the number of
 * missing cells at one bar per cell equals the bars of `inspect`'s gaps.
 */
export function coverageOf(
  series: readonly SeriesInspection[],
  heldOf: (s: SeriesInspection) => HeldBars,
  haltsOf: (s: SeriesInspection) => readonly { fromMs: number; toMs: number | undefined }[],
  fromMs: number,
  toMs: number,
  maxBuckets = 720,
): Coverage {
  const { bucketMs, buckets } = coverageGrid(series, fromMs, toMs, maxBuckets);
  const bucketOf = (ms: number) => Math.floor((ms - fromMs) / bucketMs);
  const rows = series.map((s) => {
    const cells: string[] = new Array<string>(buckets).fill(CELL.outside);
    const first = Math.max(0, bucketOf(s.firstMs));
    const last = Math.min(buckets - 1, bucketOf(barEndMs(s.klineType, s.lastMs) - 1));
    for (let b = first; b <= last; b++) cells[b] = CELL.closed;
    const held = heldOf(s);
    const runs =
      'buckets' in held
        ? held.buckets
        : held.starts.map((ms) => [bucketOf(ms), bucketOf(barEndMs(s.klineType, ms) - 1)] as const);
    for (const [from, to] of runs)
      for (let b = Math.max(0, from); b <= Math.min(buckets - 1, to); b++) cells[b] = CELL.held;
    for (const gap of s.gaps) {
      const until = Math.min(buckets - 1, bucketOf(gap.toMs - 1));
      for (let b = Math.max(0, bucketOf(gap.fromMs)); b <= until; b++) cells[b] = CELL.missing;
    }
    // A halt explains the bars it covers: its cells without a bar are halted, not missing.
    for (const halt of haltsOf(s)) {
      const until = Math.min(buckets - 1, bucketOf((halt.toMs ?? toMs) - 1));
      for (let b = Math.max(first, bucketOf(halt.fromMs)); b <= Math.min(until, last); b++)
        if (cells[b] !== CELL.held) cells[b] = CELL.halted;
    }
    return { code: s.code, klineType: s.klineType, cells: cells.join('') };
  });
  return { fromMs, bucketMs, buckets, rows };
}
