import type { TradingCalendar } from './markets.js';
import { utcToZoned, zonedToUtcMs } from './internal/zoned-time.js';

/** One trading day of an exchange: from its first segment's open to its last segment's close. */
export interface TradingSession {
  /** The exchange's own trading date, `YYYY-MM-DD` (exchange-local). */
  readonly date: string;
  /** First open of the day, epoch ms UTC. */
  readonly openMs: number;
  /** Last close of the day (after any lunch break), epoch ms UTC. */
  readonly closeMs: number;
}

/** A local calendar date (month 1-12). */
export type LocalDate = readonly [year: number, month: number, day: number];

const MINUTE_MS = 60_000;
/** How far ahead a search for the next session goes (longer than any exchange's holiday run). */
const MAX_SEARCH_DAYS = 15;

/** `date` plus `days` calendar days. */
export function addLocalDays([y, m, d]: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
}

/** Day of the week of a local date (0 = Sunday). */
export function weekdayOfDate([y, m, d]: LocalDate): number {
  return new Date(Date.UTC(y, m - 1, d)).getUTCDay();
}

/** `YYYY-MM-DD`. */
export function formatLocalDate([y, m, d]: LocalDate): string {
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The exchange-local date of instant `tsMs`. */
export function localDateOf(tsMs: number, calendar: TradingCalendar): LocalDate {
  const l = utcToZoned(tsMs, calendar.timeZone);
  return [l.year, l.month, l.day];
}

/** The instant of local wall-clock time `msOfDay` on `date` (daylight saving time handled by the zone). */
export function zonedWallClockMs(calendar: TradingCalendar, date: LocalDate, msOfDay: number): number {
  const minutes = Math.floor(msOfDay / MINUTE_MS);
  return zonedToUtcMs(calendar.timeZone, date[0], date[1], date[2], Math.floor(minutes / 60), minutes % 60);
}

/**
 * The session of `calendar` on local date `date`, or `undefined` when the exchange does not trade
 * that day (weekends; holidays are not modelled yet) or trades around the clock (no sessions).
 * Open and close are wall-clock times of that date, so a session on a daylight-saving change day
 * keeps its local hours.
 */
export function sessionOn(calendar: TradingCalendar, date: LocalDate): TradingSession | undefined {
  const first = calendar.segments[0];
  const last = calendar.segments.at(-1);
  if (first === undefined || last === undefined) return undefined;
  if (!calendar.weekdays.includes(weekdayOfDate(date))) return undefined;
  return {
    date: formatLocalDate(date),
    openMs: zonedWallClockMs(calendar, date, first[0]),
    closeMs: zonedWallClockMs(calendar, date, last[1]),
  };
}

/**
 * The session that holds instant `tsMs` (open ≤ tsMs < close), or else the first one that opens
 * after it. This is how a bar label maps to its trading day under every labelling the provider may
 * use: a label names an instant at or before the close of the day it belongs to and after the close
 * of the day before (midnight UTC, exchange-local midnight, the open, a clock hour before the open).
 * `undefined` for around-the-clock calendars.
 */
export function sessionAtOrAfter(tsMs: number, calendar: TradingCalendar): TradingSession | undefined {
  if (calendar.segments.length === 0) return undefined;
  // Start a day early: in zones west of UTC a session can still be open past the local date's end.
  let date = addLocalDays(localDateOf(tsMs, calendar), -1);
  for (let i = 0; i <= MAX_SEARCH_DAYS; i++, date = addLocalDays(date, 1)) {
    const s = sessionOn(calendar, date);
    if (s !== undefined && tsMs < s.closeMs) return s;
  }
  return undefined;
}

/** The last session on or before local date `date`, looking back at most 15 days. */
export function lastSessionOnOrBefore(
  calendar: TradingCalendar,
  date: LocalDate,
): TradingSession | undefined {
  let d = date;
  for (let i = 0; i <= MAX_SEARCH_DAYS; i++, d = addLocalDays(d, -1)) {
    const s = sessionOn(calendar, d);
    if (s !== undefined) return s;
  }
  return undefined;
}

/** Parses `YYYY-MM-DD`. */
export function parseLocalDate(date: string): LocalDate {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return [y, m, d];
}
