import type { KlineType } from './domain.js';
import { tradingSegmentsOn } from './calendar/trading-segments-on.js';
import { surelyTradingMsBetween } from './calendar/weekly-pause.js';
import { zonedToUtcMs } from './internal/zoned-time.js';
import { KLINE_PERIOD_MS, type TradingCalendar } from './markets.js';
import {
  addLocalDays,
  formatLocalDate,
  lastSessionOnOrBefore,
  localDateOf,
  parseLocalDate,
  sessionAtOrAfter,
  sessionOn,
  weekdayOfDate,
  type LocalDate,
  type TradingSession,
} from './trading-sessions.js';

/**
 * Finality of a bar, and its place in the calendar, without assuming how the service labels bars.
 *
 * The provider does not say which instant a K-line `timestamp` names (provider-facts.md, "What the
 * provider's pages do not settle"): intraday stock bars may sit on clock hours or on the session's
 * open, daily bars on midnight UTC, exchange-local midnight, the open or any instant of the
 * session, weekly and monthly bars on the period's first calendar day or first trading day. Every
 * rule here holds under each of those. An intraday, weekly or monthly label lies after the previous
 * trading day's close and no later than its own day's open or the first bar's start, so the session
 * that holds it, or else the next one to open, is its trading day ({@link sessionAtOrAfter}). A
 * daily label names its date directly (`dailyLabelDate`), so a label late in the session, or on a
 * day the calendar calls a holiday, keeps its own date.
 */

const DAY_MS = 86_400_000;

/** Whether `calendar` trades in sessions (stocks) rather than around the clock. */
function hasSessions(calendar: TradingCalendar): boolean {
  return calendar.segments.length > 0;
}

/** The last session of the week (Monday-Sunday, exchange-local) that holds `session`. */
function lastSessionOfWeek(session: TradingSession, calendar: TradingCalendar): TradingSession {
  const date = parseLocalDate(session.date);
  const sunday = addLocalDays(date, (7 - weekdayOfDate(date)) % 7);
  return lastSessionOnOrBefore(calendar, sunday) ?? session;
}

/** The last session of the calendar month that holds `session`. */
function lastSessionOfMonth(session: TradingSession, calendar: TradingCalendar): TradingSession {
  const [y, m] = parseLocalDate(session.date);
  const lastDay: LocalDate = addLocalDays(m === 12 ? [y + 1, 1, 1] : [y, m + 1, 1], -1);
  return lastSessionOnOrBefore(calendar, lastDay) ?? session;
}

/**
 * The exchange-local date a daily bar's label names, under every labelling the provider facts list
 * (D 00:00 UTC, D 00:00 exchange-local, D's open, any instant of D's session): the later of the
 * label's local date and its UTC date. East of UTC (Hong Kong, Shanghai) 00:00 UTC of D is 08:00
 * local on D, while local midnight lies on the UTC date before; west of it (New York) 00:00 UTC
 * of D is 19:00 or 20:00 local the evening before, while every session of D closes before 00:00
 * UTC ends D (16:00 New York is 20:00 or 21:00 UTC). So one of the two dates is D and the other D
 * or the day before, whatever the time of day (a fixed shift cannot be right on both sides of
 * UTC). Around-the-clock markets keep UTC, where the two are one.
 */
function dailyLabelDate(tsMs: number, calendar: TradingCalendar): LocalDate {
  const local = localDateOf(tsMs, calendar);
  const d = new Date(tsMs);
  const utc: LocalDate = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  const key = ([y, m, day]: LocalDate): number => y * 10_000 + m * 100 + day;
  return key(local) >= key(utc) ? local : utc;
}

/**
 * A daily stock bar's date ({@link dailyLabelDate}) and that date's session, or `session`
 * `undefined` where the calendar misses the bar: no session that day, or a label after its close.
 * The service's bar outranks the calendar (calendars go out of date): its date stays the one its
 * label names.
 */
function dailyBarDay(
  tsMs: number,
  calendar: TradingCalendar,
): { readonly date: LocalDate; readonly session: TradingSession | undefined } {
  const date = dailyLabelDate(tsMs, calendar);
  const session = sessionOn(calendar, date);
  return { date, session: session !== undefined && tsMs <= session.closeMs ? session : undefined };
}

/** Local midnight after local date `date`: where a day the calendar misses ends at the latest. */
function endOfLocalDay(date: LocalDate, calendar: TradingCalendar): number {
  const [y, m, d] = addLocalDays(date, 1);
  return zonedToUtcMs(calendar.timeZone, y, m, d);
}

/**
 * The instant after which a read of the bar labelled `tsMs` is sure to return its final values,
 * whatever the labelling (the "session closed by the calendar" rule of finality):
 *
 * - stocks: the close of the bar's trading day (intraday and daily bars; for intraday bars the day's
 *   last close, not the bar's own end, since where an intraday bar ends depends on the labelling, a
 *   lunch break included), of the week's last trading day (weekly) or of the month's (monthly);
 *   a daily bar's day is the date its label names ({@link tradingDateOf}); where the calendar gives
 *   that date no session, or the label lies after its close ({@link dateCalendarMisses}), the bar
 *   is the service's evidence that the exchange traded then, and it ends by the end of that local
 *   day;
 * - around-the-clock markets: the label plus one period (a day, seven days, a calendar month in
 *   UTC), which bounds the bar's end for any start label.
 *
 * Add a grace for clock skew and the provider's own delay before trusting a read made after it.
 *
 * @example
 * ```ts
 * const cal = calendarOf('AAPL.US');
 * barFinalAfterMs(Date.parse('2026-03-13T00:00:00Z'), 8, cal); // 2026-03-13T20:00:00Z (16:00 New York)
 * ```
 */
export function barFinalAfterMs(tsMs: number, klineType: KlineType, calendar: TradingCalendar): number {
  if (!hasSessions(calendar)) {
    const periodMs = KLINE_PERIOD_MS[klineType];
    if (periodMs !== undefined) return tsMs + periodMs;
    if (klineType === 8) return tsMs + DAY_MS;
    if (klineType === 9) return tsMs + 7 * DAY_MS;
    const d = new Date(tsMs);
    return Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
    );
  }
  if (klineType === 8) {
    const { date, session } = dailyBarDay(tsMs, calendar);
    return session?.closeMs ?? endOfLocalDay(date, calendar);
  }
  const session = sessionAtOrAfter(tsMs, calendar);
  // A label outside the session it belongs to may name a day the calendar does not trade (a
  // holiday, or after its close) while the service's bar says the exchange traded: the bar cannot
  // last beyond the end of that local day. (A label inside its session agrees with the calendar.)
  const missed =
    session !== undefined && tsMs >= session.openMs
      ? undefined
      : dateCalendarMisses(tsMs, klineType, calendar);
  if (missed !== undefined) return endOfLocalDay(parseLocalDate(missed), calendar);
  // No session within reach of the label (far outside any calendar): never final by the calendar.
  if (session === undefined) return Number.POSITIVE_INFINITY;
  if (klineType === 9) return lastSessionOfWeek(session, calendar).closeMs;
  if (klineType === 10) return lastSessionOfMonth(session, calendar).closeMs;
  return session.closeMs;
}

/**
 * The exchange-local date (`YYYY-MM-DD`) that a stock bar's label names when the calendar gives
 * that date no session, or the label lies after that date's close (intraday bars: at or after it):
 * the service's own bars say the exchange traded where the calendar says it did not (calendars go
 * out of date: exchanges close, or stay open, at short notice). `undefined` when the two agree, for
 * weekly and monthly bars and for around-the-clock markets. A daily label names the date
 * {@link tradingDateOf} gives, under every labelling.
 *
 * @example
 * ```ts
 * // The service serves a daily bar for a day the calendar calls a holiday:
 * dateCalendarMisses(Date.parse('2026-11-26T00:00:00Z'), 8, calendarOf('AAPL.US')); // '2026-11-26'
 * ```
 */
export function dateCalendarMisses(
  tsMs: number,
  klineType: KlineType,
  calendar: TradingCalendar,
): string | undefined {
  if (!hasSessions(calendar) || klineType === 9 || klineType === 10) return undefined;
  if (klineType === 8) {
    const { date, session } = dailyBarDay(tsMs, calendar);
    return session === undefined ? formatLocalDate(date) : undefined;
  }
  const date = localDateOf(tsMs, calendar);
  const session = sessionOn(calendar, date);
  if (session === undefined || tsMs >= session.closeMs) return formatLocalDate(date);
  return undefined;
}

/**
 * The instant from which a read of the bar labelled `tsMs` proves its values final by the calendar:
 * {@link barFinalAfterMs} plus `graceMs` (our clock against the service's, and the service's own
 * delay in settling a bar). This is the one rule of "closed by the calendar": the merger's proofs
 * ask it, and read planning asks {@link isBarClosedAt}, which is built on it, never the calendar
 * directly. (The other proof, a newer bar of the series seen in the same answer or before the
 * read, is the merger's alone.)
 *
 * @example
 * ```ts
 * const cal = calendarOf('AAPL.US');
 * finalReadFromMs(Date.parse('2026-03-13T00:00:00Z'), 8, cal, 15_000); // 2026-03-13T20:00:15Z
 * ```
 */
export function finalReadFromMs(
  tsMs: number,
  klineType: KlineType,
  calendar: TradingCalendar,
  graceMs: number,
): number {
  return barFinalAfterMs(tsMs, klineType, calendar) + graceMs;
}

/**
 * Whether the bar labelled `tsMs` of a series (its kline type and its market's calendar) is
 * provably closed at instant `atMs` under every labelling: a read made at `atMs` proves its values
 * final by the calendar ({@link finalReadFromMs}, grace included). `mergeBars` emits the newest bar
 * of an answer read at `atMs` final exactly when this holds (no newer bar of the series seen), so
 * this is the one question read planning asks about "closed yet?": the live poll's final reads,
 * the backfill's settle step and its count of closed bars.
 *
 * @example
 * ```ts
 * const cal = calendarOf('AAPL.US');
 * const label = Date.parse('2026-03-13T00:00:00Z');
 * isBarClosedAt(label, 8, cal, Date.parse('2026-03-13T20:00:10Z'), 15_000); // false: within the grace
 * isBarClosedAt(label, 8, cal, Date.parse('2026-03-13T20:00:15Z'), 15_000); // true
 * ```
 */
export function isBarClosedAt(
  tsMs: number,
  klineType: KlineType,
  calendar: TradingCalendar,
  atMs: number,
  graceMs: number,
): boolean {
  return atMs >= finalReadFromMs(tsMs, klineType, calendar, graceMs);
}

/**
 * The exchange's own trading date (`YYYY-MM-DD`) of the daily bar labelled `tsMs`: the date its
 * label names under every labelling the provider facts list (midnight UTC, exchange-local
 * midnight, the open, or any instant of the session; the later of the label's local and UTC
 * dates), so a label inside a session is that session's date. The service's bar outranks the
 * calendar: a bar on a day the calendar calls a holiday keeps that day ({@link dateCalendarMisses}
 * says so). For around-the-clock markets, the UTC date.
 *
 * @example
 * ```ts
 * // The provider's own 700.HK sample: 15:40 Hong Kong on Friday 3 March 2023.
 * tradingDateOf(Date.parse('2023-03-03T07:40:00Z'), calendarOf('700.HK')); // '2023-03-03'
 * // Midnight UTC of a New York date is the evening before in New York.
 * tradingDateOf(Date.parse('2023-03-03T00:00:00Z'), calendarOf('AAPL.US')); // '2023-03-03'
 * ```
 */
export function tradingDateOf(tsMs: number, calendar: TradingCalendar): string {
  return formatLocalDate(dailyLabelDate(tsMs, calendar));
}

/** Trading time (inside the day's session segments) between instants `fromMs` and `toMs` on local date `date`. */
function tradingMsOn(calendar: TradingCalendar, date: LocalDate, fromMs: number, toMs: number): number {
  let total = 0;
  for (const [start, end] of tradingSegmentsOn(calendar, date)) {
    const overlap = Math.min(end, toMs) - Math.max(start, fromMs);
    if (overlap > 0) total += overlap;
  }
  return total;
}

/** Whether a session opens after `afterMs` and before local date `beforeDate` (`YYYY-MM-DD`). */
function sessionBetween(afterMs: number, beforeDate: string, calendar: TradingCalendar): boolean {
  const next = sessionAtOrAfter(afterMs, calendar);
  return next !== undefined && next.date < beforeDate;
}

/** The first local date (`YYYY-MM-DD`) of the Monday-Sunday week that holds `date`. */
function mondayOf(date: string): string {
  const d = parseLocalDate(date);
  return formatLocalDate(addLocalDays(d, -((weekdayOfDate(d) + 6) % 7)));
}

/** Whether bars of an around-the-clock series must be missing between labels `aMs < bMs`. */
function aroundTheClockMissing(
  aMs: number,
  bMs: number,
  klineType: KlineType,
  calendar: TradingCalendar,
): boolean {
  const periodMs = KLINE_PERIOD_MS[klineType] ?? (klineType === 8 ? DAY_MS : undefined);
  if (periodMs !== undefined) {
    if (bMs - aMs <= periodMs) return false;
    // Forex and the like: a bar is expected only where every provider's week trades.
    return calendar.id === 'FX' ? surelyTradingMsBetween(aMs + periodMs, bMs) > 0 : true;
  }
  if (klineType === 9) return bMs - aMs > 7 * DAY_MS;
  return bMs - aMs > 31 * DAY_MS;
}

/**
 * Whether bars of the series must be missing between two consecutive labels `aMs < bMs`, under
 * every labelling: a gap is reported only when each reading agrees one is missing, so a labelling
 * never causes a false report (a single missing bar at a session's edge may go unreported under
 * clock-hour labels). Weekends, holidays and lunch breaks hold no bars (the exchange calendar);
 * forex, metals, energy and CFDs expect bars only from Monday 00:00 UTC to Friday 17:00 New York,
 * where every provider's week agrees (`weekly-pause.ts`). Past the end of an exchange's holiday
 * data weekdays count as sessions, so a holiday there can still look like a gap.
 */
export function barsMissingBetween(
  aMs: number,
  bMs: number,
  klineType: KlineType,
  calendar: TradingCalendar,
): boolean {
  if (!(bMs > aMs)) return false;
  if (!hasSessions(calendar)) return aroundTheClockMissing(aMs, bMs, klineType, calendar);
  const periodMs = KLINE_PERIOD_MS[klineType];
  const sa = sessionAtOrAfter(aMs, calendar);
  const sb = sessionAtOrAfter(bMs, calendar);
  if (sa === undefined || sb === undefined) return false;
  if (klineType === 9) {
    if (mondayOf(sa.date) === mondayOf(sb.date)) return false;
    return sessionBetween(lastSessionOfWeek(sa, calendar).closeMs, mondayOf(sb.date), calendar);
  }
  if (klineType === 10) {
    if (sa.date.slice(0, 7) === sb.date.slice(0, 7)) return false;
    return sessionBetween(lastSessionOfMonth(sa, calendar).closeMs, `${sb.date.slice(0, 7)}-01`, calendar);
  }
  const dayBetween = sa.date !== sb.date && sessionBetween(sa.closeMs, sb.date, calendar);
  if (periodMs === undefined) return dayBetween;
  const da = parseLocalDate(sa.date);
  const db = parseLocalDate(sb.date);
  if (sa.date === sb.date) return tradingMsOn(calendar, da, aMs, bMs) > periodMs;
  return (
    dayBetween ||
    tradingMsOn(calendar, da, aMs, sa.closeMs) > periodMs ||
    tradingMsOn(calendar, db, sb.openMs, bMs) >= periodMs
  );
}
