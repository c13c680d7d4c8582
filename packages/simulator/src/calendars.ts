import { DAY_MS, fromLocalDay, monthBounds, toLocal, weekdayOfDay } from './internal/zoned-time.js';

/**
 * A trading calendar of the simulated market: exchange time zone, the day's session segments and
 * the trading weekdays. Holidays are not modelled.
 */
export interface SimCalendar {
  readonly id: 'us' | 'hk' | 'cn' | 'crypto' | 'weekdays';
  readonly timeZone: string;
  /** Session segments as [startMs, endMs) since local midnight; empty = trades the whole day. */
  readonly segments: readonly (readonly [number, number])[];
  /** Weekdays with trading (0 = Sunday). */
  readonly weekdays: readonly number[];
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

/** A bar period [startMs, endMs) in epoch ms. */
export interface SimBarPeriod {
  readonly startMs: number;
  readonly endMs: number;
}

/** The trading intervals [startMs, endMs) (epoch ms) of local day `dayNumber`; empty on a non-trading day. */
export function sessionsOfDay(cal: SimCalendar, dayNumber: number): [number, number][] {
  if (!cal.weekdays.includes(weekdayOfDay(dayNumber))) return [];
  if (cal.segments.length === 0) {
    return [[fromLocalDay(dayNumber, 0, cal.timeZone), fromLocalDay(dayNumber + 1, 0, cal.timeZone)]];
  }
  return cal.segments.map(([s, e]) => [
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
 * The last instant ≤ `tMs` at which the market traded (or `tMs` itself when trading), and the
 * interval it belongs to; `undefined` when none exists within 30 days before `tMs`.
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

/** Start of the trading minute that contains the last trading instant ≤ `tMs`. */
export function lastTradingMinute(cal: SimCalendar, tMs: number): number | undefined {
  const t = lastTradingInstant(cal, tMs);
  return t === undefined ? undefined : Math.floor(t / M) * M;
}

/**
 * The bar period of `klineType` that contains `tMs`, by the convention the whole project shares
 * (core's `barPeriodAt`, re-implemented here on purpose):
 * - 24-hour calendars: intraday periods are multiples of the period since the Unix epoch; daily at
 *   00:00 UTC, weekly on Monday 00:00 UTC, monthly on the 1st 00:00 UTC; each ends where the next starts.
 * - Stocks: intraday periods are anchored at each session segment's start, and the last one of a
 *   segment ends with the segment (so it may be short); daily, weekly and monthly bars start at local
 *   midnight and end with the close of the period's last trading day.
 * Returns `undefined` for an intraday stock instant outside the session.
 */
export function simBarPeriodAt(tMs: number, klineType: number, cal: SimCalendar): SimBarPeriod | undefined {
  const periodMs = SIM_KLINE_PERIOD_MS[klineType];
  const local = toLocal(tMs, cal.timeZone);
  if (periodMs !== undefined) {
    if (cal.segments.length === 0) {
      const startMs = Math.floor(tMs / periodMs) * periodMs;
      return { startMs, endMs: startMs + periodMs };
    }
    if (!cal.weekdays.includes(local.weekday)) return undefined;
    for (const [s, e] of cal.segments) {
      if (local.msOfDay >= s && local.msOfDay < e) {
        const segStart = fromLocalDay(local.dayNumber, s, cal.timeZone);
        const segEnd = fromLocalDay(local.dayNumber, e, cal.timeZone);
        const startMs = segStart + Math.floor((tMs - segStart) / periodMs) * periodMs;
        return { startMs, endMs: Math.min(startMs + periodMs, segEnd) };
      }
    }
    return undefined;
  }
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
  const startMs = fromLocalDay(startDay, 0, cal.timeZone);
  const lastClose = cal.segments.at(-1)?.[1];
  if (lastClose === undefined) return { startMs, endMs: fromLocalDay(endDay, 0, cal.timeZone) };
  // A stock's daily (weekly, monthly) bar is complete at the close of its last trading day.
  let last = endDay - 1;
  while (last > startDay && !cal.weekdays.includes(weekdayOfDay(last))) last--;
  return { startMs, endMs: fromLocalDay(last, lastClose, cal.timeZone) };
}

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
