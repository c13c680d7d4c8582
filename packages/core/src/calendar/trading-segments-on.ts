import { zonedToUtcMs } from '../internal/zoned-time.js';
import { warnPastCalendarData } from './calendar-data-coverage.js';
import type { ExchangeId } from './exchange-calendar-data.js';
import { formatLocalDate, weekdayOfDate, type LocalDate } from './local-date.js';
import { exchangeCalendarData, type TradingCalendar } from './trading-calendar.js';

/** A stretch of trading, [startMs, endMs) epoch ms UTC. */
export type TradingSegment = readonly [startMs: number, endMs: number];

const NONE: readonly TradingSegment[] = [];
/** Per calendar object, per local date (yyyymmdd). */
const cache = new WeakMap<TradingCalendar, Map<number, readonly TradingSegment[]>>();
const holidaySets = new Map<ExchangeId, ReadonlySet<string>>();

function holidaysOf(exchange: ExchangeId): ReadonlySet<string> {
  let set = holidaySets.get(exchange);
  if (set === undefined) {
    set = new Set(exchangeCalendarData(exchange).holidays);
    holidaySets.set(exchange, set);
  }
  return set;
}

function msOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return (h * 60 + m) * 60_000;
}

/**
 * The trading segments of `calendar` on local date `date`, in time order: none on weekends and
 * holidays; on a half day or a late open, the regular segments clipped to that day's hours (a Hong
 * Kong half day keeps the morning only). Wall-clock times of that date, so daylight saving time is
 * the zone's. Empty for around-the-clock calendars, which have no sessions.
 *
 * Past the end of an exchange's data, every weekday is a regular session and a warning names the
 * exchange and the date (once per process); before its start, the same without a warning.
 */
export function tradingSegmentsOn(calendar: TradingCalendar, date: LocalDate): readonly TradingSegment[] {
  if (calendar.segments.length === 0) return NONE;
  let byDay = cache.get(calendar);
  if (byDay === undefined) {
    byDay = new Map();
    cache.set(calendar, byDay);
  }
  const dayKey = date[0] * 10_000 + date[1] * 100 + date[2];
  const hit = byDay.get(dayKey);
  if (hit !== undefined) return hit;
  if (byDay.size > 20_000) byDay.clear();
  const segments = computeSegments(calendar, date);
  byDay.set(dayKey, segments);
  return segments;
}

function computeSegments(calendar: TradingCalendar, date: LocalDate): readonly TradingSegment[] {
  if (!calendar.weekdays.includes(weekdayOfDate(date))) return NONE;
  const day = formatLocalDate(date);
  let open = 0;
  let close = Number.POSITIVE_INFINITY;
  if (calendar.id !== 'FX' && calendar.id !== 'CRYPTO') {
    const data = exchangeCalendarData(calendar.id);
    if (day > data.lastDate) warnPastCalendarData(calendar.id, day);
    else if (day >= data.firstDate) {
      if (holidaysOf(calendar.id).has(day)) return NONE;
      const lateOpen = data.lateOpens[day];
      const earlyClose = data.earlyCloses[day];
      if (lateOpen !== undefined) open = msOfDay(lateOpen);
      if (earlyClose !== undefined) close = msOfDay(earlyClose);
    }
  }
  const segments: TradingSegment[] = [];
  for (const [s, e] of calendar.segments) {
    const from = Math.max(s, open);
    const to = Math.min(e, close);
    if (from < to)
      segments.push([wallClockMs(calendar.timeZone, date, from), wallClockMs(calendar.timeZone, date, to)]);
  }
  return segments;
}

/** The instant of local wall-clock time `ms` since midnight on `date`. */
function wallClockMs(timeZone: string, [y, m, d]: LocalDate, ms: number): number {
  const minutes = Math.floor(ms / 60_000);
  return zonedToUtcMs(timeZone, y, m, d, Math.floor(minutes / 60), minutes % 60);
}
