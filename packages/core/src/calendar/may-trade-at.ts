import { localDateOf } from '../trading-sessions.js';
import type { TradingCalendar } from './trading-calendar.js';
import { tradingSegmentsOn } from './trading-segments-on.js';
import { isWeeklyMarketOpenAt } from './weekly-pause.js';

const DAY_MS = 86_400_000;
/** A stock may trade from this long before its session opens (a bar labelled at the open). */
const OPEN_MARGIN_MS = 60_000;

/**
 * Whether bars of a market with this calendar can change at `nowMs`, conservative at every edge:
 * stocks from a minute before each session segment to its end (lunch breaks, holidays, weekends and
 * early closes from the calendar); forex, metals, energy and CFDs from Sunday 17:00 New York to
 * Saturday 00:00 UTC (some providers run the week's last bars past the New York close); crypto
 * always. What a poller asks: a market that cannot trade needs no poll.
 */
export function mayTradeAt(calendar: TradingCalendar, nowMs: number): boolean {
  if (calendar.id === 'CRYPTO') return true;
  if (calendar.id === 'FX') {
    const weekday = (Math.floor(nowMs / DAY_MS) + 4) % 7;
    return weekday === 5 || isWeeklyMarketOpenAt(nowMs);
  }
  const date = localDateOf(nowMs + OPEN_MARGIN_MS, calendar);
  return tradingSegmentsOn(calendar, date).some(
    ([start, end]) => nowMs >= start - OPEN_MARGIN_MS && nowMs < end,
  );
}
