import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { isKlineType } from '@quoteflow/core';
import type { Bar, KlineType } from '@quoteflow/core';

/**
 * A bar as it may arrive from anywhere: numbers or decimal strings, a timestamp in seconds or
 * milliseconds, an empty or missing volume. Core's `Bar` is a `BarInput`.
 */
export interface BarInput {
  readonly code: string;
  readonly klineType: number;
  /** Bar start, epoch ms (a value below 1e11 is read as seconds, see {@link normalizeBars}). */
  readonly tsMs: number | string;
  readonly open: number | string;
  readonly high: number | string;
  readonly low: number | string;
  readonly close: number | string;
  readonly volume: number | string | null | undefined;
  readonly turnover: number | string | null | undefined;
  /**
   * When the values were read (core's `Bar.readAtMs`). Rows without it count as read at 0, all in
   * one answer: only a newer row of the same input proves them final in `mergeBars`.
   */
  readonly readAtMs?: number;
  /** When the answer that held the row arrived (core's `Bar.receivedAtMs`); 0 without it. */
  readonly receivedAtMs?: number;
}

/** What can be wrong with an input bar. */
export const BAR_PROBLEMS = [
  'bad-code',
  'bad-kline-type',
  'bad-timestamp',
  'timestamp-in-seconds',
  'bad-price',
  'inconsistent-ohlc',
  'bad-volume',
  'missing-volume',
  'duplicate',
  'late',
  'outside-session',
  'vanished',
] as const;
export type BarProblem = (typeof BAR_PROBLEMS)[number];

/** A typed report of one bad or repaired input row. Nothing is turned into NaN in silence. */
export interface BarReport {
  readonly type: 'bar-report';
  readonly problem: BarProblem;
  /** `dropped`: the row was not used; `repaired`: it was used after the fix the message names. */
  readonly action: 'dropped' | 'repaired';
  readonly code: string | undefined;
  readonly klineType: number | undefined;
  readonly tsMs: number | undefined;
  readonly message: string;
  /** The offending input row, as received. */
  readonly row: unknown;
}

/** Options of {@link normalizeBars} and {@link normalizeBarList}. */
export interface NormalizeBarsOptions {
  /**
   * Receives every report (dropped or repaired row). A throw from it errors the stream (operator)
   * or propagates (plain function).
   */
  readonly onReport?: (report: BarReport) => void;
}

/** Timestamps below this are read as Unix seconds (1e11 ms is 1973; 1e11 s is year 5138). */
export const SECONDS_THRESHOLD = 1e11;

function report(
  onReport: ((r: BarReport) => void) | undefined,
  problem: BarProblem,
  action: 'dropped' | 'repaired',
  row: Partial<BarInput>,
  tsMs: number | undefined,
  message: string,
): void {
  if (onReport === undefined) return;
  onReport({
    type: 'bar-report',
    problem,
    action,
    code: typeof row.code === 'string' ? row.code : undefined,
    klineType: typeof row.klineType === 'number' ? row.klineType : undefined,
    tsMs,
    message,
    row,
  });
}

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') return Number(v);
  return Number.NaN;
}

function toVolume(v: unknown): number | null | undefined {
  // `undefined` here means "invalid"; `null` means "absent" (the upstream empty-string defect).
  if (v === null || v === undefined || v === '') return null;
  const n = toNumber(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Validates and converts one row to a `Bar`, or reports it and returns `undefined`. A row that is
 * already a valid `Bar` with a millisecond timestamp is returned as is (no allocation).
 */
export function normalizeBar(row: BarInput, onReport?: (r: BarReport) => void): Bar | undefined {
  // Fast path: a decoded Bar whose fields are all fine.
  const r = row as Partial<Bar>;
  if (
    r.type === 'bar' &&
    typeof r.tsMs === 'number' &&
    r.tsMs >= SECONDS_THRESHOLD &&
    typeof r.volume === 'number' &&
    r.volume >= 0 &&
    typeof r.turnover === 'number' &&
    r.turnover >= 0 &&
    typeof r.readAtMs === 'number' &&
    typeof r.receivedAtMs === 'number' &&
    (r.low as number) <= (r.open as number) &&
    (r.low as number) <= (r.close as number) &&
    (r.high as number) >= (r.open as number) &&
    (r.high as number) >= (r.close as number) &&
    Number.isFinite(r.high) &&
    Number.isFinite(r.low) &&
    typeof r.code === 'string' &&
    r.code !== '' &&
    isKlineType(r.klineType)
  ) {
    return row as Bar;
  }
  return slowNormalize(row, onReport);
}

function slowNormalize(row: BarInput, onReport?: (r: BarReport) => void): Bar | undefined {
  // Messages are built only for a listener: a dropped row must stay cheap when nobody asks why.
  const where =
    onReport === undefined
      ? ''
      : `bar ${String(row?.code)} type ${String(row?.klineType)} at ${String(row?.tsMs)}`;
  if (typeof row !== 'object' || row === null)
    return drop(onReport, 'bad-code', {}, undefined, `bar row is not an object: ${String(row)}`);
  if (typeof row.code !== 'string' || row.code === '')
    return drop(onReport, 'bad-code', row, undefined, `${where}: "code" must be a non-empty string`);
  if (!isKlineType(row.klineType))
    return drop(
      onReport,
      'bad-kline-type',
      row,
      undefined,
      `${where}: "klineType" must be an integer from 1 to 10`,
    );
  const tsMs = timestampOf(row, onReport, where);
  if (tsMs === undefined) return undefined;
  const open = toNumber(row.open);
  const high = toNumber(row.high);
  const low = toNumber(row.low);
  const close = toNumber(row.close);
  if (!Number.isFinite(open) || !Number.isFinite(high) || !Number.isFinite(low) || !Number.isFinite(close))
    return drop(onReport, 'bad-price', row, tsMs, `${where}: open/high/low/close must be finite numbers`);
  if (low > open || low > close || high < open || high < close) {
    const got = `got O ${open} H ${high} L ${low} C ${close}`;
    return drop(
      onReport,
      'inconsistent-ohlc',
      row,
      tsMs,
      `${where}: needs low <= open, close <= high, ${got}`,
    );
  }
  const volume = toVolume(row.volume);
  const turnover = toVolume(row.turnover);
  if (volume === undefined || turnover === undefined)
    return drop(
      onReport,
      'bad-volume',
      row,
      tsMs,
      `${where}: volume/turnover must be empty or a number >= 0`,
    );
  if (volume === null || turnover === null) {
    // provider-facts.md: an empty `volume`/`turnover` string is a known upstream defect.
    report(onReport, 'missing-volume', 'repaired', row, tsMs, `${where}: empty volume/turnover kept as null`);
  }
  return {
    type: 'bar',
    code: row.code,
    klineType: row.klineType as KlineType,
    tsMs,
    open,
    high,
    low,
    close,
    volume,
    turnover,
    readAtMs: stampOf(row.readAtMs),
    receivedAtMs: stampOf(row.receivedAtMs),
  };
}

/** The row's start in epoch ms (a timestamp in seconds repaired), or `undefined` once reported. */
function timestampOf(
  row: BarInput,
  onReport: ((r: BarReport) => void) | undefined,
  where: string,
): number | undefined {
  const tsMs = toNumber(row.tsMs);
  if (!Number.isFinite(tsMs) || tsMs <= 0 || !Number.isInteger(tsMs))
    return drop(onReport, 'bad-timestamp', row, undefined, `${where}: timestamp is not a positive integer`);
  if (tsMs >= SECONDS_THRESHOLD) return tsMs;
  // provider-facts.md: K-line timestamps are Unix seconds on the wire.
  const repaired = tsMs * 1000;
  const message = `${where}: timestamp read as seconds, multiplied by 1000`;
  report(onReport, 'timestamp-in-seconds', 'repaired', row, repaired, message);
  return repaired;
}

/** Reports a row that is not used; `undefined`, so a check can return it. */
function drop(
  onReport: ((r: BarReport) => void) | undefined,
  problem: BarProblem,
  row: Partial<BarInput>,
  tsMs: number | undefined,
  message: string,
): undefined {
  report(onReport, problem, 'dropped', row, tsMs, message);
  return undefined;
}

/** A read or receive stamp, 0 when the row has none. */
function stampOf(ms: number | undefined): number {
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : 0;
}

/** The result of {@link normalizeBarList}. */
export interface NormalizedBars {
  /** Valid bars, sorted by code, kline type and start; one per (code, klineType, tsMs). */
  readonly bars: Bar[];
  readonly reports: BarReport[];
}

/**
 * Plain-function form of {@link normalizeBars}: validates, converts, sorts and deduplicates one
 * batch of rows. Of repeated rows with the same (code, klineType, tsMs) the last one in input
 * order wins, and each dropped repeat is reported as `duplicate`.
 *
 * @example
 * ```ts
 * const { bars, reports } = normalizeBarList(response.bars);
 * for (const r of reports) log.warn(r.message);
 * ```
 */
export function normalizeBarList(
  rows: readonly BarInput[],
  options: NormalizeBarsOptions = {},
): NormalizedBars {
  const reports: BarReport[] = [];
  const onReport = (r: BarReport) => {
    reports.push(r);
    options.onReport?.(r);
  };
  return { bars: normalizeInto(rows, onReport), reports };
}

function normalizeInto(rows: readonly BarInput[], onReport: ((r: BarReport) => void) | undefined): Bar[] {
  const bars: Bar[] = [];
  let sorted = true;
  for (const row of rows) {
    const bar = normalizeBar(row, onReport);
    if (bar === undefined) continue;
    const prev = bars.at(-1);
    if (prev !== undefined && compareBars(prev, bar) >= 0) sorted = false;
    bars.push(bar);
  }
  if (sorted) return bars;
  // Stable sort, then keep the last of each run of equal keys.
  bars.sort(compareBars);
  const out: Bar[] = [];
  for (let i = 0; i < bars.length; i++) {
    const bar = bars[i] as Bar;
    const next = bars[i + 1];
    if (next !== undefined && compareBars(bar, next) === 0) {
      report(
        onReport,
        'duplicate',
        'dropped',
        bar,
        bar.tsMs,
        `bar ${bar.code} type ${bar.klineType} at ${bar.tsMs}: repeated, the later row wins`,
      );
      continue;
    }
    out.push(bar);
  }
  return out;
}

function compareBars(a: Bar, b: Bar): number {
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  if (a.klineType !== b.klineType) return a.klineType - b.klineType;
  return a.tsMs - b.tsMs;
}

/**
 * Validates, converts, sorts and deduplicates each batch of bar rows (one `/kline` or
 * `/batch-kline` response), so the provider's quirks never pass through: bars newest-first or
 * repeated, an empty `volume`/`turnover` (kept as `null`), a timestamp in seconds (multiplied by
 * 1000), NaN or non-numeric prices, `high < low` or open/close outside [low, high] (dropped).
 * Every dropped or repaired row is reported through `onReport`; nothing becomes NaN in silence.
 *
 * Emits one sorted array per input array (possibly empty); forwards error and completion. A throw
 * from `onReport` errors the output.
 *
 * @param options - `onReport` receives a {@link BarReport} per dropped or repaired row.
 * @example
 * ```ts
 * klineResponses$.pipe(
 *   normalizeBars({ onReport: (r) => console.error(r.message) }),
 *   mergeBars({ graceMs: 2_000 }),
 * );
 * ```
 */
export function normalizeBars(
  options: NormalizeBarsOptions = {},
): OperatorFunction<readonly BarInput[], Bar[]> {
  const onReport = options.onReport;
  return (source) =>
    new Observable<Bar[]>((subscriber) =>
      source.subscribe({
        next: (rows) => {
          let bars: Bar[];
          try {
            bars = normalizeInto(rows, onReport);
          } catch (err) {
            subscriber.error(err);
            return;
          }
          subscriber.next(bars);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}
