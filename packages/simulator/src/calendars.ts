import { DAY_MS, fromLocalDay, monthBounds, toLocal, weekdayOfDay } from './internal/zoned-time.js';
import { SIM_DEFAULT_LABELLING, type SimLabelling } from './sim-labelling.js';
import { segmentsOfDay } from './sim-trading-days.js';

/**
 * A trading calendar of the simulated market: exchange time zone, a regular day's session segments
 * and the trading weekdays. Holidays and half days apply by id (`segmentsOfDay`,
 * `sim-trading-days.ts`), from the `holidays` package: a source independent of core's.
 */
export interface SimCalendar {
  readonly id: 'us' | 'hk' | 'cn' | 'crypto' | 'weekdays';
  readonly timeZone: string;
  /** Session segments as [startMs, endMs) since local midnight; empty = trades the whole day. */
  readonly segments: readonly (readonly [number, number])[];
  /** Weekdays with trading (0 = Sunday). */
  readonly weekdays: readonly number[];
  /**
   * Local dates (`YYYY-MM-DD`) that trade a regular session although the holiday data closes them
   * (the simulator's `holidayTrading`: a service that trades where a calendar says it does not).
   */
  readonly tradesOn?: readonly string[];
}

const H = 3_600_000;
const M = 60_000;
const WEEKDAYS = [1, 2, 3, 4, 5] as const;

/**
 * The simulator's calendars. Stocks trade in exchange session hours; crypto around the clock;
 * forex, metals, energy, CFD indices and commodities Monday 00:00 to Saturday 00:00 UTC (a
 * simplification of the real Sunday-evening-to-Friday-evening week, documented in the README).
 */
export const SIM_CALENDARS = {
  us: { id: 'us', timeZone: 'America/New_York', segments: [[9 * H + 30 * M, 16 * H]], weekdays: WEEKDAYS },
  hk: {
    id: 'hk',
    timeZone: 'Asia/Hong_Kong',
    segments: [
      [9 * H + 30 * M, 12 * H],
      [13 * H, 16 * H],
    ],
    weekdays: WEEKDAYS,
  },
  cn: {
    id: 'cn',
    timeZone: 'Asia/Shanghai',
    segments: [
      [9 * H + 30 * M, 11 * H + 30 * M],
      [13 * H, 15 * H],
    ],
    weekdays: WEEKDAYS,
  },
  crypto: { id: 'crypto', timeZone: 'UTC', segments: [], weekdays: [0, 1, 2, 3, 4, 5, 6] },
  weekdays: { id: 'weekdays', timeZone: 'UTC', segments: [], weekdays: WEEKDAYS },
} as const satisfies Record<string, SimCalendar>;

/** Intraday period of each K-line type in ms (`undefined` for daily, weekly, monthly). */
export const SIM_KLINE_PERIOD_MS: Readonly<Record<number, number | undefined>> = {
  1: M,
  2: 5 * M,
  3: 15 * M,
  4: 30 * M,
  5: H,
  6: 2 * H,
  7: 4 * H,
  8: undefined,
  9: undefined,
  10: undefined,
};

/**
 * A bar's period: its label and the trading time it holds, in epoch ms. For 24-hour markets and
 * session-anchored stock bars the label is the first instant held; other stock readings label a bar
 * earlier (a clock hour, a midnight), never after its first trade, except daily-type bars labelled
 * inside a session (`'in-session'`), whose label lies within the trading time they hold.
 */
export interface SimBarPeriod {
  /** The bar's label: the instant its wire `timestamp` names. */
  readonly startMs: number;
  /** First instant whose trades the bar holds (≥ `startMs`, but for a label inside the session). */
  readonly tradesFromMs: number;
  /** End of the bar (exclusive): for stocks, the close of its last session; the bar is final from then. */
  readonly endMs: number;
}

/** The trading intervals [startMs, endMs) (epoch ms) of local day `dayNumber`; empty on a non-trading day. */
export function sessionsOfDay(cal: SimCalendar, dayNumber: number): [number, number][] {
  if (!cal.weekdays.includes(weekdayOfDay(dayNumber))) return [];
  if (cal.segments.length === 0) {
    return [[fromLocalDay(dayNumber, 0, cal.timeZone), fromLocalDay(dayNumber + 1, 0, cal.timeZone)]];
  }
  return segmentsOfDay(cal, dayNumber).map(([s, e]) => [
    fromLocalDay(dayNumber, s, cal.timeZone),
    fromLocalDay(dayNumber, e, cal.timeZone),
  ]);
}

/** Whether the market of `cal` is trading at instant `tMs`. */
export function isTradingAt(cal: SimCalendar, tMs: number): boolean {
  const day = toLocal(tMs, cal.timeZone).dayNumber;
  return sessionsOfDay(cal, day).some(([s, e]) => tMs >= s && tMs < e);
}

/**
 * The last instant ≤ `tMs` at which the market traded (or `tMs` itself when trading);
 * `undefined` when none exists within 30 days before `tMs`.
 */
export function lastTradingInstant(cal: SimCalendar, tMs: number): number | undefined {
  const today = toLocal(tMs, cal.timeZone).dayNumber;
  for (let d = today; d > today - 30; d--) {
    const sessions = sessionsOfDay(cal, d);
    for (let i = sessions.length - 1; i >= 0; i--) {
      const [s, e] = sessions[i]!;
      if (s <= tMs) return Math.min(tMs, e - 1);
    }
  }
  return undefined;
}

/** The first instant ≥ `tMs` at which the market trades; `undefined` when none within 30 days. */
export function nextTradingInstant(cal: SimCalendar, tMs: number): number | undefined {
  const today = toLocal(tMs, cal.timeZone).dayNumber;
  for (let d = today; d < today + 30; d++) {
    for (const [s, e] of sessionsOfDay(cal, d)) if (e > tMs) return Math.max(s, tMs);
  }
  return undefined;
}

/** Start of the trading minute that contains the last trading instant ≤ `tMs`. */
export function lastTradingMinute(cal: SimCalendar, tMs: number): number | undefined {
  const t = lastTradingInstant(cal, tMs);
  return t === undefined ? undefined : Math.floor(t / M) * M;
}

/**
 * The bar period of `klineType` that holds instant `tMs` (core's `barPeriodAt`, re-implemented
 * here on purpose), labelled by `labelling`:
 * - 24-hour calendars (labelling ignored): intraday periods are multiples of the period since the
 *   Unix epoch; daily at 00:00 UTC, weekly on Monday 00:00 UTC, monthly on the 1st 00:00 UTC; each
 *   ends where the next starts.
 * - Stocks, intraday: `'session'` anchors periods at each session segment's start, the last one of
 *   a segment ending with it (so it may be short); `'clock'` aligns them to the exchange-local clock
 *   and clips them to the session (an hourly bar labelled 09:00 holds 09:30-10:00). `undefined`
 *   for an instant outside the session.
 * - Stocks, daily: the sessions of the local date of `tMs` (`undefined` on a non-trading date),
 *   labelled that date's 00:00 local, 00:00 UTC, first open or 20 minutes before its last close
 *   (`labelling.daily`). Weekly (Monday
 *   to Friday) and monthly bars hold their period's sessions and are labelled on the period's first
 *   calendar day or first trading day, at the daily reading's time of that date. Every close is
 *   computed from local dates (so a week in which daylight saving time starts still closes at
 *   16:00 New York on Friday). The label may lie after `tMs` when `tMs` precedes the first trade
 *   (or, labelled inside the session, the label's own instant).
 * @param labelling stock bar labels. @defaultValue `SIM_DEFAULT_LABELLING`
 */
export function simBarPeriodAt(
  tMs: number,
  klineType: number,
  cal: SimCalendar,
  labelling: SimLabelling = SIM_DEFAULT_LABELLING,
): SimBarPeriod | undefined {
  const periodMs = SIM_KLINE_PERIOD_MS[klineType];
  const local = toLocal(tMs, cal.timeZone);
  return periodMs !== undefined
    ? intradayPeriodAt(tMs, periodMs, cal, labelling, local)
    : multiDayPeriodAt(klineType, cal, labelling, local);
}

/** The intraday period (fixed length) holding `tMs`: see {@link simBarPeriodAt}. */
function intradayPeriodAt(
  tMs: number,
  periodMs: number,
  cal: SimCalendar,
  labelling: SimLabelling,
  local: LocalTime,
): SimBarPeriod | undefined {
  const tz = cal.timeZone;
  if (cal.segments.length === 0) {
    const startMs = Math.floor(tMs / periodMs) * periodMs;
    return { startMs, tradesFromMs: startMs, endMs: startMs + periodMs };
  }
  const day = local.dayNumber;
  const segments = segmentsOfDay(cal, day);
  const segment = segments.find(([s, e]) => local.msOfDay >= s && local.msOfDay < e);
  if (segment === undefined) return undefined;
  if (labelling.intraday === 'session') {
    const [s, e] = segment;
    const startLocal = s + Math.floor((local.msOfDay - s) / periodMs) * periodMs;
    const startMs = fromLocalDay(day, startLocal, tz);
    return {
      startMs,
      tradesFromMs: startMs,
      endMs: fromLocalDay(day, Math.min(startLocal + periodMs, e), tz),
    };
  }
  // 'clock': the local clock period, holding only the session time inside it.
  const startLocal = Math.floor(local.msOfDay / periodMs) * periodMs;
  const endLocal = startLocal + periodMs;
  let from = Number.NaN;
  let to = Number.NaN;
  for (const [s, e] of segments) {
    const a = Math.max(s, startLocal);
    const b = Math.min(e, endLocal);
    if (a >= b) continue;
    if (Number.isNaN(from)) from = a;
    to = b;
  }
  return {
    startMs: fromLocalDay(day, startLocal, tz),
    tradesFromMs: fromLocalDay(day, from, tz),
    endMs: fromLocalDay(day, to, tz),
  };
}

/** The daily, weekly or monthly period of the local date `local`: see {@link simBarPeriodAt}. */
function multiDayPeriodAt(
  klineType: number,
  cal: SimCalendar,
  labelling: SimLabelling,
  local: LocalTime,
): SimBarPeriod | undefined {
  const tz = cal.timeZone;
  let startDay: number;
  let endDay: number; // exclusive
  if (klineType === 8) {
    startDay = local.dayNumber;
    endDay = startDay + 1;
  } else if (klineType === 9) {
    startDay = local.dayNumber - ((local.weekday + 6) % 7);
    endDay = startDay + 7;
  } else {
    [startDay, endDay] = monthBounds(local.dayNumber);
  }
  const first = cal.segments[0];
  const lastClose = cal.segments.at(-1)?.[1];
  if (first === undefined || lastClose === undefined) {
    const startMs = fromLocalDay(startDay, 0, tz);
    return { startMs, tradesFromMs: startMs, endMs: fromLocalDay(endDay, 0, tz) };
  }
  const trades = (d: number) => segmentsOfDay(cal, d).length > 0;
  let firstDay = startDay;
  while (firstDay < endDay && !trades(firstDay)) firstDay++;
  if (firstDay === endDay) return undefined; // a date (or period) without sessions holds no bar
  let lastDay = endDay - 1;
  while (!trades(lastDay)) lastDay--;
  const firstOpen = segmentsOfDay(cal, firstDay)[0]![0];
  const lastCloseOfPeriod = segmentsOfDay(cal, lastDay).at(-1)![1];
  const axis = klineType === 9 ? labelling.weekly : labelling.monthly;
  const labelDay = klineType !== 8 && axis === 'first-trading-day' ? firstDay : startDay;
  const startMs =
    labelling.daily === 'utc-midnight'
      ? labelDay * DAY_MS
      : fromLocalDay(labelDay, dailyLabelMsOfDay(cal, labelDay, labelling.daily), tz);
  // Both ends from local dates: stepping 24 h in UTC would be an hour off across a DST change.
  return {
    startMs,
    tradesFromMs: fromLocalDay(firstDay, firstOpen, tz),
    endMs: fromLocalDay(lastDay, lastCloseOfPeriod, tz),
  };
}

type LocalTime = ReturnType<typeof toLocal>;

/** How long after local midnight of `day` a daily-type label of a stock lies, under a local reading. */
function dailyLabelMsOfDay(cal: SimCalendar, day: number, daily: SimLabelling['daily']): number {
  if (daily === 'session-open') return cal.segments[0]![0];
  if (daily !== 'in-session') return 0;
  // The day's own last close (a half day's early one), or the regular close on a day that does not
  // trade (a weekly bar labelled on a holiday Monday).
  const close = segmentsOfDay(cal, day).at(-1)?.[1] ?? cal.segments.at(-1)![1];
  return close - IN_SESSION_BEFORE_CLOSE_MS;
}

/** Where `'in-session'` labels a daily bar: this long before the day's close (15:40 in Hong Kong). */
const IN_SESSION_BEFORE_CLOSE_MS = 20 * M;

/** The trading intervals of `cal` clipped to [fromMs, toMs), in time order. */
export function tradingIntervals(cal: SimCalendar, fromMs: number, toMs: number): [number, number][] {
  const out: [number, number][] = [];
  if (toMs <= fromMs) return out;
  if (cal.segments.length === 0 && cal.weekdays.length === 7) return [[fromMs, toMs]];
  const first = toLocal(fromMs, cal.timeZone).dayNumber;
  const last = toLocal(toMs - 1, cal.timeZone).dayNumber;
  for (let d = first; d <= last; d++) {
    for (const [s, e] of sessionsOfDay(cal, d)) {
      const a = Math.max(s, fromMs);
      const b = Math.min(e, toMs);
      if (a < b) out.push([a, b]);
    }
  }
  return out;
}

export { DAY_MS };
