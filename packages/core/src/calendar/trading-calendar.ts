import type { ExchangeCalendarData, ExchangeId } from './exchange-calendar-data.js';
import { EXCHANGE_CALENDAR_DATA } from './exchange-calendar-data.generated.js';

/** Which calendar: an exchange, the weekly pause of forex, metals, energy and CFDs (`'FX'`), or 24/7 crypto. */
export type CalendarId = ExchangeId | 'FX' | 'CRYPTO';

/**
 * A market's calendar: its id (which selects the generated holidays and early closes), local time
 * zone, regular session segments and trading weekdays. Holidays, half days and late opens apply by
 * id: read a date's sessions with `tradingSegmentsOn` or `sessionOn`, not from `segments`.
 */
export interface TradingCalendar {
  readonly id: CalendarId;
  readonly timeZone: string;
  /**
   * A regular day's segments as [start, end) ms since local midnight (two with a lunch break).
   * Empty for markets whose bars run around the clock, aligned to UTC (crypto; forex and the like,
   * which pause at weekends only).
   */
  readonly segments: readonly (readonly [startMs: number, endMs: number])[];
  /** Weekdays (0 = Sunday) with trading. */
  readonly weekdays: readonly number[];
}

const WEEKDAYS = [1, 2, 3, 4, 5] as const;

/**
 * The generated data of an exchange. The electronic US exchange shares New York's (generate.py
 * checks that exchange_calendars gives both the same sessions); Shenzhen shares Shanghai's (both
 * close on the State Council's holidays; exchange_calendars has no XSHE).
 */
export function exchangeCalendarData(id: ExchangeId): ExchangeCalendarData {
  return EXCHANGE_CALENDAR_DATA[id === 'XSHE' ? 'XSHG' : id === 'XNAS' ? 'XNYS' : id];
}

function msOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return (h * 60 + m) * 60_000;
}

function exchangeCalendar(id: ExchangeId): TradingCalendar {
  const { timeZone, regular } = exchangeCalendarData(id);
  const open = msOfDay(regular.open);
  const close = msOfDay(regular.close);
  const segments: (readonly [number, number])[] =
    regular.breakStart === null || regular.breakEnd === null
      ? [[open, close]]
      : [
          [open, msOfDay(regular.breakStart)],
          [msOfDay(regular.breakEnd), close],
        ];
  return { id, timeZone, segments, weekdays: WEEKDAYS };
}

/** Each exchange's calendar, regular hours from the generated data. */
export const EXCHANGE_CALENDARS: Readonly<Record<ExchangeId, TradingCalendar>> = {
  XNYS: exchangeCalendar('XNYS'),
  XNAS: exchangeCalendar('XNAS'),
  XHKG: exchangeCalendar('XHKG'),
  XSHG: exchangeCalendar('XSHG'),
  XSHE: exchangeCalendar('XSHE'),
};

/**
 * Forex, metals, energy, CFD indices and commodities: bars aligned to UTC, trading from Sunday
 * 17:00 to Friday 17:00 New York (`weekly-pause.ts`).
 */
export const FX_CALENDAR: TradingCalendar = {
  id: 'FX',
  timeZone: 'UTC',
  segments: [],
  weekdays: [0, 1, 2, 3, 4, 5],
};

/** Crypto: around the clock, every day, bars aligned to UTC. */
export const CRYPTO_CALENDAR: TradingCalendar = {
  id: 'CRYPTO',
  timeZone: 'UTC',
  segments: [],
  weekdays: [0, 1, 2, 3, 4, 5, 6],
};
