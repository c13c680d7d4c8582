import {
  KLINE_PERIOD_MS,
  barPeriodAt,
  tradingSegmentsOn,
  utcToZoned,
  zonedToUtcMs,
} from '@quoteflow/core/internal';
import type { KlineType, TradingCalendar } from '@quoteflow/core';

/** A bar length: a K-line type or an N-minute period. */
export type BarKind = KlineType | { readonly periodMs: number };

const DAY_MS = 86_400_000;
const MAX_DAYS_AHEAD = 15;

function periodOf(kind: BarKind): number | undefined {
  return typeof kind === 'number' ? KLINE_PERIOD_MS[kind] : kind.periodMs;
}

function localDate(ms: number, tz: string): [number, number, number] {
  const l = utcToZoned(ms, tz);
  return [l.year, l.month, l.day];
}

function addDays([y, m, d]: [number, number, number], days: number): [number, number, number] {
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
}

/** The first session-segment start at or after `tMs` (stocks, by core's calendar), or `undefined` within 15 days. */
function nextSegmentStart(tMs: number, cal: TradingCalendar): number | undefined {
  const day0 = localDate(tMs, cal.timeZone);
  for (let i = 0; i <= MAX_DAYS_AHEAD; i++) {
    for (const [segStart] of tradingSegmentsOn(cal, addDays(day0, i))) if (segStart >= tMs) return segStart;
  }
  return undefined;
}

/**
 * The start of the first bar period of `kind` that begins at or after `tMs`, under core's
 * `barPeriodAt` convention (sessions for stocks, with core's holidays and early closes; UTC for
 * 24-hour markets).
 */
export function firstBarStartAtOrAfter(tMs: number, kind: BarKind, cal: TradingCalendar): number {
  const periodMs = periodOf(kind);
  if (periodMs !== undefined) {
    if (cal.segments.length === 0) return Math.ceil(tMs / periodMs) * periodMs;
    const p = barPeriodAt(tMs, kind, cal);
    if (p !== undefined) return p.startMs === tMs ? tMs : nextBarStart(tMs, kind, cal);
    return nextSegmentStart(tMs, cal) ?? tMs + DAY_MS;
  }
  const p = barPeriodAt(tMs, kind, cal);
  if (p !== undefined && p.startMs === tMs) return tMs;
  return nextBarStart(tMs, kind, cal);
}

/**
 * The start of the bar period of `kind` that follows the one containing `tsMs` (for a stock
 * instant outside the session: the first period after it). Used for gap detection and for
 * counting the source bars of a resampled period.
 */
export function nextBarStart(tsMs: number, kind: BarKind, cal: TradingCalendar): number {
  const periodMs = periodOf(kind);
  const tz = cal.timeZone;
  if (periodMs !== undefined) {
    if (cal.segments.length === 0) return (Math.floor(tsMs / periodMs) + 1) * periodMs;
    const p = barPeriodAt(tsMs, kind, cal);
    const from = p === undefined ? tsMs : p.endMs;
    if (p !== undefined) {
      const q = barPeriodAt(from, kind, cal);
      if (q !== undefined && q.startMs === from) return from;
    }
    return nextSegmentStart(from, cal) ?? from + DAY_MS;
  }
  const type = typeof kind === 'number' ? kind : 8;
  const start = localDate(barPeriodAt(tsMs, kind, cal)?.startMs ?? tsMs, tz);
  if (type === 8) {
    // 24-hour markets have a daily bar every UTC day; stocks on their next trading day.
    for (let i = 1; cal.segments.length > 0 && i <= MAX_DAYS_AHEAD; i++) {
      const day = addDays(start, i);
      if (tradingSegmentsOn(cal, day).length > 0) return zonedToUtcMs(tz, ...day);
    }
    return zonedToUtcMs(tz, ...addDays(start, 1));
  }
  if (type === 9) return zonedToUtcMs(tz, ...addDays(start, 7));
  const [y, m] = start;
  return m === 12 ? zonedToUtcMs(tz, y + 1, 1, 1) : zonedToUtcMs(tz, y, m + 1, 1);
}

/**
 * How many bar periods of `source` start in [startMs, endMs) (capped at 100,000). Arithmetic for
 * intraday periods that do not cross a session boundary, iteration otherwise.
 */
export function countBarStarts(
  startMs: number,
  endMs: number,
  source: BarKind,
  cal: TradingCalendar,
): number {
  return barStartsIn(startMs, endMs, source, cal).count;
}

/**
 * The bar periods of `source` that start in [startMs, endMs): how many (capped at 100,000, where
 * `lastMs` is the last one counted) and the start of the last (`undefined` when none).
 */
export function barStartsIn(
  startMs: number,
  endMs: number,
  source: BarKind,
  cal: TradingCalendar,
): { readonly count: number; readonly lastMs: number | undefined } {
  const periodMs = periodOf(source);
  if (periodMs !== undefined) {
    const inOneSegment =
      cal.segments.length === 0 ||
      barPeriodAt(endMs - 1, { periodMs: endMs - startMs }, cal)?.startMs === startMs;
    if (inOneSegment && firstBarStartAtOrAfter(startMs, source, cal) === startMs) {
      const count = Math.max(0, Math.ceil((endMs - startMs) / periodMs));
      return { count, lastMs: count === 0 ? undefined : startMs + (count - 1) * periodMs };
    }
  }
  let n = 0;
  let lastMs: number | undefined;
  for (
    let t = firstBarStartAtOrAfter(startMs, source, cal);
    t < endMs && n < 100_000;
    t = nextBarStart(t, source, cal)
  ) {
    n++;
    lastMs = t;
  }
  return { count: n, lastMs };
}

/**
 * core's `barPeriodAt`, with its 24-hour intraday case (multiples of the period since the epoch)
 * computed inline: that case needs no calendar arithmetic and is the hot one.
 */
export function periodAt(
  tsMs: number,
  kind: BarKind,
  cal: TradingCalendar,
): { readonly startMs: number; readonly endMs: number } | undefined {
  if (cal.segments.length === 0) {
    const periodMs = periodOf(kind);
    if (periodMs !== undefined) {
      const startMs = Math.floor(tsMs / periodMs) * periodMs;
      return { startMs, endMs: startMs + periodMs };
    }
  }
  return barPeriodAt(tsMs, kind, cal);
}
