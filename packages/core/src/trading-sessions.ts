import { tradingSegmentsOn } from './calendar/trading-segments-on.js';
import type { TradingCalendar } from './calendar/trading-calendar.js';
import { addLocalDays, formatLocalDate, type LocalDate } from './calendar/local-date.js';
import { utcToZoned } from './internal/zoned-time.js';

export {
  addLocalDays,
  weekdayOfDate,
  formatLocalDate,
  parseLocalDate,
  type LocalDate,
} from './calendar/local-date.js';

/** One trading day of an exchange: from its first segment's open to its last segment's close. */
export interface TradingSession {
  /** The exchange's own trading date, `YYYY-MM-DD` (exchange-local). */
  readonly date: string;
  /** First open of the day, epoch ms UTC. */
  readonly openMs: number;
  /** Last close of the day (after any lunch break; a half day's early close), epoch ms UTC. */
  readonly closeMs: number;
}

/** How far a search for a session goes (longer than any exchange's holiday run, Golden Week included). */
const MAX_SEARCH_DAYS = 15;

/** The exchange-local date of instant `tsMs`. */
export function localDateOf(tsMs: number, calendar: TradingCalendar): LocalDate {
  const l = utcToZoned(tsMs, calendar.timeZone);
  return [l.year, l.month, l.day];
}

/**
 * The session of `calendar` on local date `date`, or `undefined` when the exchange does not trade
 * that day (weekends and holidays, from the generated calendar data) or trades around the clock (no
 * sessions). A half day closes at its early close. Open and close are wall-clock times of that
 * date, so a session on a daylight-saving change day keeps its local hours.
 */
export function sessionOn(calendar: TradingCalendar, date: LocalDate): TradingSession | undefined {
  let byDay = sessionCache.get(calendar);
  if (byDay === undefined) {
    byDay = new Map();
    sessionCache.set(calendar, byDay);
  }
  const dayKey = date[0] * 10_000 + date[1] * 100 + date[2];
  const hit = byDay.get(dayKey);
  if (hit !== undefined) return hit ?? undefined;
  const segments = tradingSegmentsOn(calendar, date);
  const first = segments[0];
  const last = segments.at(-1);
  const session =
    first === undefined || last === undefined
      ? null
      : { date: formatLocalDate(date), openMs: first[0], closeMs: last[1] };
  if (byDay.size > 20_000) byDay.clear();
  byDay.set(dayKey, session);
  return session ?? undefined;
}

/** Sessions per calendar and local date (yyyymmdd); `null` for a day without one. Hot in mergeBars. */
const sessionCache = new WeakMap<TradingCalendar, Map<number, TradingSession | null>>();

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
