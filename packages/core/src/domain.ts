/**
 * Domain records: what the client decodes the service's responses into, and what operators and
 * sinks consume. Every record is readonly, tagged by `type`, and always has the same keys: an
 * absent value is `undefined`, never a missing key.
 */

/** The service's K-line types (spec, K-line type table). */
export const KLINE_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
export type KlineType = (typeof KLINE_TYPES)[number];

/** Whether `n` is one of the service's K-line types. */
export function isKlineType(n: unknown): n is KlineType {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 10;
}

/** One K-line (bar) of one product and type. `tsMs` is the bar start, epoch milliseconds UTC. */
export interface Bar {
  readonly type: 'bar';
  readonly code: string;
  readonly klineType: KlineType;
  readonly tsMs: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** `null` where the service sent an empty string (a known upstream defect, provider-facts.md). */
  readonly volume: number | null;
  /** `null` where the service sent an empty string (a known upstream defect, provider-facts.md). */
  readonly turnover: number | null;
  /**
   * When the request that returned these values was sent: the client's clock (epoch ms), read
   * just before the HTTP exchange left (after the scheduler let it go, not when it was queued).
   * The service computed the values at or after this instant, so a bar whose period had ended by
   * `readAtMs` was read after it closed (up to the skew between the client's and the service's clocks).
   */
  readonly readAtMs: number;
  /**
   * When the answer carrying these values arrived: the client's clock (epoch ms), after the body
   * was read. Unique and strictly increasing per client (`max(now, previous + 1)`): the bars of
   * one answer share it and no two answers of one client do, so equal `readAtMs` and
   * `receivedAtMs` identify the same answer.
   */
  readonly receivedAtMs: number;
}

/** The two instants the client stamps on every bar it returns (see {@link Bar}). */
export type ReadStamps = Pick<Bar, 'readAtMs' | 'receivedAtMs'>;

/**
 * A bar as a merged series emits it: every update of the forming bar with `final: false` and an
 * increasing `revision`, then the closed bar exactly once with `final: true`.
 */
export interface BarUpdate extends Omit<Bar, 'type'> {
  readonly type: 'bar-update';
  readonly final: boolean;
  /** 0 for the first emission of this bar start, +1 for each later one. */
  readonly revision: number;
}

/** One price level of an order book side. */
export interface Level {
  readonly price: number;
  /** `undefined` where the service gives no volume (some CFD indices). */
  readonly volume: number | undefined;
  /** The decimal strings as sent, for callers that need exact values. */
  readonly priceRaw: string;
  readonly volumeRaw: string | undefined;
}

/** The latest order book of one product (`/depth-tick`). */
export interface DepthTick {
  readonly type: 'depth';
  readonly code: string;
  /** Quote sequence number; a 64-bit value, so always a bigint. `undefined` if the service omits it. */
  readonly seq: bigint | undefined;
  /** Quote time, epoch ms UTC; `undefined` if the service omits it. */
  readonly tickTimeMs: number | undefined;
  /** Best first. Either side may be empty (limit-up/limit-down). */
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
}

/** Partial basic information of one stock (`/static_info`); every field may be absent. */
export interface StaticInfo {
  readonly type: 'static-info';
  readonly code: string;
  readonly board: string | undefined;
  readonly bps: string | undefined;
  readonly circulatingShares: string | undefined;
  readonly currency: string | undefined;
  readonly dividendYield: string | undefined;
  readonly eps: string | undefined;
  readonly epsTtm: string | undefined;
  readonly exchange: string | undefined;
  readonly hkShares: string | undefined;
  readonly lotSize: string | undefined;
  readonly nameCn: string | undefined;
  readonly nameEn: string | undefined;
  readonly nameHk: string | undefined;
  readonly totalShares: string | undefined;
}

/** The three suspension endpoints. */
export const EXCHANGES = ['sse', 'nyse', 'nasdaq'] as const;
export type Exchange = (typeof EXCHANGES)[number];

/** The time zone in which each exchange's wall-clock suspension times are read (provider-facts.md). */
export const EXCHANGE_TIME_ZONES: Readonly<Record<Exchange, string>> = {
  sse: 'Asia/Shanghai',
  nyse: 'America/New_York',
  nasdaq: 'America/New_York',
};

/**
 * One suspension/resumption record. Raw fields are kept as sent, with null and empty strings
 * turned into `undefined` (the spec's Nullable column); the instants are derived from them.
 */
export interface SuspensionRecord {
  readonly type: 'suspension';
  readonly exchange: Exchange;
  readonly symbol: string;
  readonly symbolName: string | undefined;
  readonly haltReason: string | undefined;
  readonly haltDate: string | undefined;
  readonly haltTime: string | undefined;
  readonly haltPeriod: string | undefined;
  readonly haltDateTime: string | undefined;
  readonly resumeDate: string | undefined;
  readonly resumeTime: string | undefined;
  readonly resumeDateTime: string | undefined;
  readonly sourceExchange: string | undefined;
  readonly pauseThresholdPrice: string | undefined;
  readonly publishDate: string;
  /** Halt instant, epoch ms UTC, from `haltDateTime` or `haltDate` + `haltTime` in exchange-local time. */
  readonly haltAtMs: number | undefined;
  /** Resume instant, epoch ms UTC, from `resumeDateTime` or `resumeDate` + `resumeTime`. */
  readonly resumeAtMs: number | undefined;
  /** Announcement instant, epoch ms UTC. */
  readonly publishAtMs: number;
}

/**
 * A marker that travels downstream when a source restarts or skips, so stateful operators can
 * reset instead of guessing (for example after a reconnect, or when history could not reach back).
 */
export interface GapMarker {
  readonly type: 'gap';
  readonly code: string;
  readonly klineType: KlineType | undefined;
  /** First missing instant (epoch ms), if known. */
  readonly fromMs: number | undefined;
  /** Instant from which data is complete again (epoch ms), if known. */
  readonly toMs: number | undefined;
  readonly reason: string;
}

/**
 * Where a series' history stands in a K-line stream (`klineUpdates` brackets each series' backfill
 * with them): `begin` when its history starts coming, which may be page by page, newest page first,
 * so older bars can follow newer ones until it ends; `complete` when every bar asked for was read
 * (or all the service has); `cut-short` when it stopped before that (the run stopped or failed,
 * the series left the run). After the end, the series' final bars come in time order. A sink that
 * keeps each key in time order (Kafka) holds the series' updates between the two and releases them
 * oldest first at the end; files commit each page as it arrives.
 */
export interface HistoryMarker {
  readonly type: 'history';
  /** The series' product code. */
  readonly code: string;
  /** The series' K-line type. */
  readonly klineType: KlineType;
  /** Where its history stands: see {@link HISTORY_PHASES}. */
  readonly phase: HistoryPhase;
}

/** The phases of a {@link HistoryMarker}: one `begin`, then `complete` or `cut-short`. */
export const HISTORY_PHASES = ['begin', 'complete', 'cut-short'] as const;
/** One of {@link HISTORY_PHASES}. */
export type HistoryPhase = (typeof HISTORY_PHASES)[number];
