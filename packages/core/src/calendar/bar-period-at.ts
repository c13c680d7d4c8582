import type { KlineType } from '../domain.js';
import { utcToZoned, zonedToUtcMs } from '../internal/zoned-time.js';
import { KLINE_PERIOD_MS } from '../markets.js';
import { lastSessionOnOrBefore } from '../trading-sessions.js';
import { addLocalDays, type LocalDate } from './local-date.js';
import type { TradingCalendar } from './trading-calendar.js';
import { tradingSegmentsOn } from './trading-segments-on.js';

/** A bar period: [startMs, endMs) in epoch ms UTC. */
export interface BarPeriod {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * The bar period of kline type `klineType` (or of an N-minute period, `periodMs`) that contains
 * instant `tsMs`, under the conventions every quoteflow package and the simulator share:
 *
 * - 24-hour markets: intraday periods are multiples of the period since the Unix epoch; daily bars
 *   start at 00:00 UTC, weekly on Monday 00:00 UTC, monthly on the 1st 00:00 UTC.
 * - Stocks: intraday periods are anchored at the start of each of the day's session segments
 *   (09:30, and 13:00 after a lunch break) and the last period of a segment ends with the segment,
 *   so it may be short (a half day's last bar ends at its early close); daily, weekly and monthly
 *   bars start at local midnight and end with that day's (or the period's last trading day's)
 *   close. Holidays and early closes come from the exchange calendar.
 *
 * Returns `undefined` for a stock instant outside its trading hours (a holiday's included).
 */
export function barPeriodAt(
  tsMs: number,
  klineTypeOrPeriodMs: KlineType | { periodMs: number },
  calendar: TradingCalendar,
): BarPeriod | undefined {
  const periodMs =
    typeof klineTypeOrPeriodMs === 'number'
      ? KLINE_PERIOD_MS[klineTypeOrPeriodMs]
      : klineTypeOrPeriodMs.periodMs;
  const tz = calendar.timeZone;
  if (periodMs !== undefined) {
    if (calendar.segments.length === 0) {
      const startMs = Math.floor(tsMs / periodMs) * periodMs;
      return { startMs, endMs: startMs + periodMs };
    }
    const local = utcToZoned(tsMs, tz);
    for (const [segStart, segEnd] of tradingSegmentsOn(calendar, [local.year, local.month, local.day])) {
      if (tsMs >= segStart && tsMs < segEnd) {
        const startMs = segStart + Math.floor((tsMs - segStart) / periodMs) * periodMs;
        return { startMs, endMs: Math.min(startMs + periodMs, segEnd) };
      }
    }
    return undefined;
  }
  const local = utcToZoned(tsMs, tz);
  const type = typeof klineTypeOrPeriodMs === 'number' ? klineTypeOrPeriodMs : 8;
  let startDay: LocalDate;
  let endDay: LocalDate; // exclusive, local date
  if (type === 8) {
    startDay = [local.year, local.month, local.day];
    endDay = addLocalDays(startDay, 1);
  } else if (type === 9) {
    const back = (local.weekday + 6) % 7; // days since Monday
    startDay = addLocalDays([local.year, local.month, local.day], -back);
    endDay = addLocalDays(startDay, 7);
  } else {
    startDay = [local.year, local.month, 1];
    endDay = local.month === 12 ? [local.year + 1, 1, 1] : [local.year, local.month + 1, 1];
  }
  const startMs = zonedToUtcMs(tz, ...startDay);
  let endMs = zonedToUtcMs(tz, ...endDay);
  if (calendar.segments.length > 0) {
    // A stock's day ends with its close, and a week or month with its last trading day's close,
    // taken from that day's local wall clock (never by stepping 24 h in UTC across a DST change).
    const lastDay = lastSessionOnOrBefore(calendar, addLocalDays(endDay, -1));
    if (lastDay !== undefined && lastDay.closeMs > startMs) endMs = lastDay.closeMs;
  }
  return { startMs, endMs };
}
