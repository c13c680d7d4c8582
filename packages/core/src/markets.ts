import type { KlineType } from './domain.js';
import { utcToZoned, zonedToUtcMs } from './internal/zoned-time.js';
import { addLocalDays, lastSessionOnOrBefore } from './trading-sessions.js';

/** Product classes as the spec groups them. */
export const PRODUCT_CLASSES = [
  'us-stock',
  'hk-stock',
  'cn-stock',
  'index',
  'forex',
  'metal',
  'energy',
  'crypto',
  'cfd',
  'commodity',
] as const;
export type ProductClass = (typeof PRODUCT_CLASSES)[number];

/** The two endpoint families (spec: What the service does). */
export const FAMILIES = ['stock', 'general'] as const;
export type Family = (typeof FAMILIES)[number];

/** Path prefix of each family. */
export const FAMILY_PREFIX: Readonly<Record<Family, string>> = {
  stock: '/quote-stock-b-api',
  general: '/quote-b-api',
};

/** Stock market suffixes (provider-facts.md); the suffix decides the family. */
export const STOCK_MARKETS = ['US', 'HK', 'SH', 'SZ'] as const;
export type StockMarket = (typeof STOCK_MARKETS)[number];

/** The market suffix of a stock or index code (`AAPL.US` → `US`), or `undefined`. */
export function stockMarketOf(code: string): StockMarket | undefined {
  const dot = code.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const suffix = code.slice(dot + 1);
  return (STOCK_MARKETS as readonly string[]).includes(suffix) ? (suffix as StockMarket) : undefined;
}

/** The endpoint family that serves `code`: codes with a stock market suffix go to the stock family. */
export function familyOf(code: string): Family {
  return stockMarketOf(code) === undefined ? 'general' : 'stock';
}

const METALS = new Set([
  'GOLD',
  'SILVER',
  'XAUUSD',
  'XAGUSD',
  'XPTUSD',
  'XPDUSD',
  'PLATINUM',
  'PALLADIUM',
  'COPPER',
]);
const ENERGY = new Set(['USOIL', 'UKOIL', 'WTI', 'BRENT', 'NGAS', 'NATGAS', 'XNGUSD']);
const CFD_INDICES = new Set([
  'US30',
  'US500',
  'SPX500',
  'NAS100',
  'USTEC',
  'GER40',
  'DE40',
  'UK100',
  'JP225',
  'HK50',
  'AUS200',
  'FRA40',
  'EU50',
  'CHINA50',
]);
const CURRENCIES = new Set([
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'AUD',
  'NZD',
  'CAD',
  'CHF',
  'CNH',
  'HKD',
  'SGD',
  'SEK',
  'NOK',
  'DKK',
  'ZAR',
  'MXN',
  'TRY',
  'PLN',
]);
const CRYPTO_QUOTES = ['USDT', 'USDC', 'BUSD', 'BTC', 'ETH', 'FDUSD'];

/**
 * Best-effort product class of a code. Stock suffixes are exact; for general-family codes the
 * service publishes no rule, so known names and shapes decide and callers may override per code.
 */
export function classifyCode(code: string): ProductClass {
  const market = stockMarketOf(code);
  if (market === 'US') return 'us-stock';
  if (market === 'HK') return 'hk-stock';
  if (market === 'SH' || market === 'SZ') return 'cn-stock';
  const upper = code.toUpperCase();
  if (METALS.has(upper)) return 'metal';
  if (ENERGY.has(upper)) return 'energy';
  if (CFD_INDICES.has(upper)) return 'cfd';
  if (upper.length === 6 && CURRENCIES.has(upper.slice(0, 3)) && CURRENCIES.has(upper.slice(3)))
    return 'forex';
  if (CRYPTO_QUOTES.some((q) => upper.length > q.length && upper.endsWith(q))) return 'crypto';
  return 'commodity';
}

/** Whether `/kline` accepts a non-zero `kline_timestamp_end` for this class (spec: forex, metals, crypto). */
export function canPageBackwards(productClass: ProductClass): boolean {
  return productClass === 'forex' || productClass === 'metal' || productClass === 'crypto';
}

/** K-line types the stock family does not have (spec, K-line type table: 2-hour and 4-hour bars). */
export const STOCK_UNSUPPORTED_KLINE_TYPES: readonly KlineType[] = [6, 7];

/** Whether the service has bars of `klineType` for `code` (stock and index codes have no 2-hour or 4-hour bars). */
export function hasKlineType(code: string, klineType: KlineType): boolean {
  return familyOf(code) === 'general' || !STOCK_UNSUPPORTED_KLINE_TYPES.includes(klineType);
}

/** A trading session: local time zone and the day's segments as [start, end) ms since local midnight. */
export interface TradingCalendar {
  readonly timeZone: string;
  /** Empty for markets that trade around the clock. */
  readonly segments: readonly (readonly [startMs: number, endMs: number])[];
  /** Weekdays (0 = Sunday) with trading. */
  readonly weekdays: readonly number[];
}

const H = 3_600_000;
const M = 60_000;

/** Session hours per stock market (exchange local time, holidays not modelled). */
export const STOCK_CALENDARS: Readonly<Record<StockMarket, TradingCalendar>> = {
  US: { timeZone: 'America/New_York', segments: [[9 * H + 30 * M, 16 * H]], weekdays: [1, 2, 3, 4, 5] },
  HK: {
    timeZone: 'Asia/Hong_Kong',
    segments: [
      [9 * H + 30 * M, 12 * H],
      [13 * H, 16 * H],
    ],
    weekdays: [1, 2, 3, 4, 5],
  },
  SH: {
    timeZone: 'Asia/Shanghai',
    segments: [
      [9 * H + 30 * M, 11 * H + 30 * M],
      [13 * H, 15 * H],
    ],
    weekdays: [1, 2, 3, 4, 5],
  },
  SZ: {
    timeZone: 'Asia/Shanghai',
    segments: [
      [9 * H + 30 * M, 11 * H + 30 * M],
      [13 * H, 15 * H],
    ],
    weekdays: [1, 2, 3, 4, 5],
  },
};

/** Around-the-clock markets (crypto, and forex/metals/energy/CFDs here): bars aligned to UTC. */
export const UTC_CALENDAR: TradingCalendar = {
  timeZone: 'UTC',
  segments: [],
  weekdays: [0, 1, 2, 3, 4, 5, 6],
};

/** The calendar whose bars `code` follows. */
export function calendarOf(code: string): TradingCalendar {
  const market = stockMarketOf(code);
  return market === undefined ? UTC_CALENDAR : STOCK_CALENDARS[market];
}

/** Intraday period length of each K-line type in ms; `undefined` for daily, weekly, monthly. */
export const KLINE_PERIOD_MS: Readonly<Record<KlineType, number | undefined>> = {
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
 * - Stocks: intraday periods are anchored at the start of each session segment (09:30, and 13:00
 *   after a lunch break) and the last period of a segment ends with the segment, so it may be
 *   short; daily, weekly and monthly bars start at local midnight and end with that day's (or the
 *   period's last trading day's) close.
 *
 * Returns `undefined` for a stock instant outside its trading hours.
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
  const local = utcToZoned(tsMs, tz);
  const localMidnight = zonedToUtcMs(tz, local.year, local.month, local.day);
  if (periodMs !== undefined) {
    if (calendar.segments.length === 0) {
      const startMs = Math.floor(tsMs / periodMs) * periodMs;
      return { startMs, endMs: startMs + periodMs };
    }
    if (!calendar.weekdays.includes(local.weekday)) return undefined;
    for (const [segStart, segEnd] of calendar.segments) {
      if (local.msOfDay >= segStart && local.msOfDay < segEnd) {
        const offset = Math.floor((local.msOfDay - segStart) / periodMs) * periodMs;
        const startMs = localMidnight + segStart + offset;
        return { startMs, endMs: Math.min(startMs + periodMs, localMidnight + segEnd) };
      }
    }
    return undefined;
  }
  const lastClose = calendar.segments.at(-1)?.[1];
  const type = typeof klineTypeOrPeriodMs === 'number' ? klineTypeOrPeriodMs : 8;
  let startDay: [number, number, number];
  let endDay: [number, number, number]; // exclusive, local date
  if (type === 8) {
    startDay = [local.year, local.month, local.day];
    endDay = addDays(startDay, 1);
  } else if (type === 9) {
    const back = (local.weekday + 6) % 7; // days since Monday
    startDay = addDays([local.year, local.month, local.day], -back);
    endDay = addDays(startDay, 7);
  } else {
    startDay = [local.year, local.month, 1];
    endDay = local.month === 12 ? [local.year + 1, 1, 1] : [local.year, local.month + 1, 1];
  }
  const startMs = zonedToUtcMs(tz, ...startDay);
  let endMs = zonedToUtcMs(tz, ...endDay);
  if (lastClose !== undefined) {
    // A stock's day ends with its close, and a week or month with its last trading day's close,
    // taken from that day's local wall clock (never by stepping 24 h in UTC across a DST change).
    const lastDay = lastSessionOnOrBefore(calendar, addLocalDays(endDay, -1));
    if (lastDay !== undefined && lastDay.closeMs > startMs) endMs = lastDay.closeMs;
  }
  return { startMs, endMs };
}

function addDays([y, m, d]: [number, number, number], days: number): [number, number, number] {
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
}
