import type { Exchange, KlineType } from './domain.js';
import {
  CRYPTO_CALENDAR,
  EXCHANGE_CALENDARS,
  FX_CALENDAR,
  type TradingCalendar,
} from './calendar/trading-calendar.js';

export type { TradingCalendar } from './calendar/trading-calendar.js';

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

/**
 * The stock market whose codes a suspension endpoint lists: `sse` → `SH`; `nyse` and `nasdaq` →
 * `US` (a US code does not say which of the two it trades on).
 */
export function marketOfExchange(exchange: Exchange): StockMarket {
  return exchange === 'sse' ? 'SH' : 'US';
}

/**
 * The product code a suspension record's `symbol` names: Shanghai's `600000` is `600000.SH`, New
 * York's and the electronic exchange's `AAPL` is `AAPL.US` (a symbol that already carries a market
 * suffix is kept).
 */
export function codeOfSuspendedSymbol(exchange: Exchange, symbol: string): string {
  if (stockMarketOf(symbol) !== undefined) return symbol;
  return `${symbol}.${marketOfExchange(exchange)}`;
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

/** Per stock market suffix, its exchange's calendar (US codes follow the New York exchange's, which the electronic exchange's equals). */
export const STOCK_CALENDARS: Readonly<Record<StockMarket, TradingCalendar>> = {
  US: EXCHANGE_CALENDARS.XNYS,
  HK: EXCHANGE_CALENDARS.XHKG,
  SH: EXCHANGE_CALENDARS.XSHG,
  SZ: EXCHANGE_CALENDARS.XSHE,
};

/** Around-the-clock markets with UTC-aligned bars: crypto's calendar (kept under its old name). */
export const UTC_CALENDAR: TradingCalendar = CRYPTO_CALENDAR;

/**
 * The calendar whose sessions and bars `code` follows: its exchange's for stocks and indexes, the
 * weekly pause for forex, metals, energy, CFD indices and commodities, around the clock for crypto.
 */
export function calendarOf(code: string): TradingCalendar {
  const market = stockMarketOf(code);
  if (market !== undefined) return STOCK_CALENDARS[market];
  return classifyCode(code) === 'crypto' ? CRYPTO_CALENDAR : FX_CALENDAR;
}

const H = 3_600_000;
const M = 60_000;

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
