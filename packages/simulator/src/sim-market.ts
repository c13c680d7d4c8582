import {
  lastTradingInstant,
  lastTradingMinute,
  nextTradingInstant,
  sessionsOfDay,
  simBarPeriodAt,
  type SimBarPeriod,
} from './calendars.js';
import type { SimProduct } from './catalogue.js';
import { hash32, hashString, signedUnit, unit } from './internal/hash.js';
import { DAY_MS, fromLocalDay, toLocal } from './internal/zoned-time.js';
import { resolveSimLabelling, type SimLabelling } from './sim-labelling.js';

/** One simulated bar (numbers; the server formats them as the wire's decimal strings). */
export interface SimBar {
  /** The bar's label, epoch ms (the wire's `timestamp` is this in seconds); see {@link SimLabelling}. */
  readonly startMs: number;
  /** Close of the bar's last session (24-hour markets: the next bar's start), epoch ms. */
  readonly endMs: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
  readonly turnover: number;
  /** Whether the bar is still forming at the market time it was computed for. */
  readonly forming: boolean;
}

/** One simulated order book. */
export interface SimBook {
  readonly seq: bigint;
  readonly tickTimeMs: number;
  /** Best first; `[price, volume]`. */
  readonly bids: readonly (readonly [number, number])[];
  readonly asks: readonly (readonly [number, number])[];
}

/** Options of {@link SimMarket}. */
export interface SimMarketOptions {
  /** Seed of every random walk: the same seed gives the same market. */
  readonly seed: number;
  /** First instant with history (bars before it do not exist), epoch ms. */
  readonly historyStartMs: number;
  /** Base of the depth `seq` numbers (each product adds its own offset). @defaultValue 30_000_000n */
  readonly seqBase?: bigint;
  /** Which instant a stock bar's label names, per axis (the rest default). @defaultValue `SIM_DEFAULT_LABELLING` */
  readonly labelling?: Partial<SimLabelling>;
}

const MINUTE = 60_000;
const FINE_MS = 15_000;
const KNOTS = MINUTE / FINE_MS;
/** Scales of the value-noise random walk; all multiples of a minute, so the coarse path is linear within a minute. */
const SCALES_MS = [
  60_000, 600_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000, 2_592_000_000, 15_552_000_000,
];

/** Folds of closed days are pure functions of (seed, product parameters, day): safe to share across instances. */
const SHARED_DAY_CACHE = new Map<string, Agg | null>();
/** Folds of a day's first minutes up to `uptoMs` (minute-aligned), extended as market time passes. */
const SHARED_PREFIX_CACHE = new Map<string, { readonly uptoMs: number; readonly agg: Agg | undefined }>();

interface ProductState {
  readonly p: SimProduct;
  /** Seed + every product parameter the path depends on: the shared cache key prefix. */
  readonly fingerprint: string;
  readonly h: number;
  readonly logBase: number;
  readonly amps: readonly number[];
  readonly fineAmp: number;
  readonly seqOffset: bigint;
}

/** A fold of 1-minute bars; prices as natural logs (exp is monotonic, so extremes fold the same). */
interface Agg {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  turnover: number;
}

interface CnDay {
  /** Limit-up/limit-down day direction (+1/-1) or 0. */
  readonly dir: number;
  readonly openMs: number;
  /** Next local midnight. */
  readonly endMs: number;
  readonly upper: number;
  readonly lower: number;
  readonly logUpper: number;
  readonly logLower: number;
}

/** A-share price rule on log prices: a limit day's drive toward the limit, clamped at ±10 % of the previous close. */
function cnAdjust(day: CnDay, t: number, log: number): number {
  let v = log;
  if (day.dir !== 0) v += day.dir * 0.2 * Math.min(1, Math.max(0, (t - day.openMs) / (90 * MINUTE)));
  return v > day.logUpper ? day.logUpper : v < day.logLower ? day.logLower : v;
}

/**
 * The deterministic market behind the simulator. Each product's log price is a sum of piecewise
 * linear value-noise walks at scales from 15 s to 180 days (Brownian-like, mean-reverting over
 * years), so the price at any instant costs a handful of hashes and never depends on call order.
 * Bars are folds of 1-minute bars (open, close at the minute's ends, high/low over 15-second knots),
 * so every K-line type is exactly consistent with the 1-minute bars it spans. A-shares are clamped
 * to ±10 % of the previous close and some days are driven to their limit.
 */
export class SimMarket {
  readonly #seed: number;
  readonly #historyStartMs: number;
  readonly #products = new Map<string, ProductState>();
  /** Closed trading days, shared by every market of the process with the same seed and product. */
  readonly #dayCache = SHARED_DAY_CACHE;
  readonly #barCache = new Map<string, Agg | null>();
  readonly #cnDays = new Map<string, CnDay>();
  readonly #seqBase: bigint;
  readonly #labelling: SimLabelling;

  constructor(products: Iterable<SimProduct>, options: SimMarketOptions) {
    this.#labelling = resolveSimLabelling(options.labelling);
    this.#seed = options.seed >>> 0;
    this.#historyStartMs = options.historyStartMs;
    this.#seqBase = options.seqBase ?? 30_000_000n;
    for (const p of products) this.add(p);
  }

  /** Adds (or replaces) a product. */
  add(p: SimProduct): void {
    const h = hashString(p.code) ^ hash32(this.#seed, 0x5eed);
    const amps = SCALES_MS.map((l) => p.dailyVol * Math.sqrt(l / DAY_MS));
    this.#products.set(p.code, {
      p,
      fingerprint: [
        this.#seed,
        p.code,
        p.productClass,
        p.basePrice,
        p.dailyVol,
        p.minuteVolume,
        p.volumeDecimals,
        p.calendar.id,
        p.calendar.tradesOn?.join(',') ?? '',
      ].join('|'),
      h,
      logBase: Math.log(p.basePrice),
      amps,
      fineAmp: p.dailyVol * Math.sqrt(FINE_MS / DAY_MS),
      seqOffset: BigInt(hash32(h, 0x5e9) % 90_000_000),
    });
  }

  /** The product of `code` (case-sensitive), if listed. */
  product(code: string): SimProduct | undefined {
    return this.#products.get(code)?.p;
  }

  /** The product of `code` is no longer listed (the service stops serving it). */
  withdraw(code: string): void {
    this.#products.delete(code);
  }

  /** Every listed product. */
  products(): SimProduct[] {
    return [...this.#products.values()].map((s) => s.p);
  }

  get historyStartMs(): number {
    return this.#historyStartMs;
  }

  /** The stock bar labelling this market serves. */
  get labelling(): SimLabelling {
    return this.#labelling;
  }

  /** The period (label, trades, end) of the `klineType` bar of `code` that holds instant `tMs`; see {@link simBarPeriodAt}. */
  periodAt(code: string, klineType: number, tMs: number): SimBarPeriod | undefined {
    return simBarPeriodAt(tMs, klineType, this.#state(code).p.calendar, this.#labelling);
  }

  /** The last trade price of `code` at market instant `tMs` (the last session's close when closed). */
  priceAt(code: string, tMs: number): number {
    const s = this.#state(code);
    const t = lastTradingInstant(s.p.calendar, tMs) ?? tMs;
    return this.#price(s, t);
  }

  /**
   * Up to `count` bars of `klineType` whose label is ≤ `endMs` (default: the latest), oldest
   * first, as of market time `nowMs`; the last one is still forming while its sessions are not
   * all over.
   */
  bars(code: string, klineType: number, nowMs: number, count: number, endMs?: number): SimBar[] {
    const s = this.#state(code);
    const cal = s.p.calendar;
    const out: SimBar[] = [];
    let m = lastTradingMinute(cal, Math.min(endMs ?? nowMs, nowMs));
    if (endMs !== undefined && endMs < nowMs) {
      // A bar labelled before its first trade (a stock's daily bar at midnight, a monthly bar on a
      // Saturday 1st) is selected by its label even when all its trades come after `endMs`.
      const next = nextTradingInstant(cal, endMs + 1);
      if (next !== undefined && next <= nowMs) {
        const p = simBarPeriodAt(next, klineType, cal, this.#labelling);
        if (p !== undefined && p.startMs <= endMs) m = Math.floor(next / MINUTE) * MINUTE;
      }
    }
    while (out.length < count && m !== undefined && m >= this.#historyStartMs) {
      const period = simBarPeriodAt(m, klineType, cal, this.#labelling);
      if (period === undefined) break; // cannot happen for a trading minute
      const bar = this.#bar(s, klineType, period, nowMs);
      if (bar !== undefined) out.push(bar);
      m = lastTradingMinute(cal, period.tradesFromMs - 1);
    }
    return out.reverse();
  }

  /** The order book of `code` at market time `nowMs` (frozen at the last session's end when closed). */
  book(code: string, nowMs: number): SimBook {
    const s = this.#state(code);
    const p = s.p;
    const t = lastTradingInstant(p.calendar, nowMs) ?? nowMs;
    const e = p.bookIntervalMs;
    // The book changes at instants n*e + off(n); seq grows only then (by 1 to 3).
    let n = Math.floor(t / e);
    if (t < n * e + this.#bookOffset(s, n)) n -= 1;
    const changedAt = n * e + this.#bookOffset(s, n);
    const seq = this.#seqBase + s.seqOffset + BigInt(n) * 3n + BigInt(hash32(s.h, 0x5e0, n) % 3);
    const mid = this.#price(s, changedAt);
    const tick = 10 ** -p.priceDecimals;
    const r = (i: number) => unit(hash32(s.h, 0xb00c, n, i));
    // Inactive moments: fewer levels than the maximum (spec, depth rule 1).
    const levels = r(0) < 0.15 ? Math.max(1, Math.floor(p.depthLevels * r(1))) : p.depthLevels;
    const spreadTicks = 1 + Math.floor(r(2) * 3);
    let bestBid = Math.floor(mid / tick - spreadTicks / 2) * tick;
    let bestAsk = bestBid + spreadTicks * tick;
    let bidsEmpty = false;
    let asksEmpty = false;
    if (p.productClass === 'cn-stock') {
      const day = this.#cnDay(s, changedAt);
      const up = round(day.upper, p.priceDecimals);
      const down = round(day.lower, p.priceDecimals);
      // At limit-up nobody sells (no asks); at limit-down nobody buys (spec, depth rule 2).
      if (mid >= up - tick / 2) {
        asksEmpty = true;
        bestBid = up;
      } else if (mid <= down + tick / 2) {
        bidsEmpty = true;
        bestAsk = down;
      }
    }
    const volumeOf = (i: number): number => {
      const base =
        p.productClass === 'crypto'
          ? 0.05 + r(10 + i) * 4
          : p.family === 'stock'
            ? 100 * (1 + Math.floor(r(10 + i) * 80))
            : 1 + Math.floor(r(10 + i) * 50) * 10_000;
      return base;
    };
    const bids: [number, number][] = [];
    const asks: [number, number][] = [];
    for (let i = 0; i < levels; i++) {
      if (!bidsEmpty && bestBid - i * tick > 0)
        bids.push([round(bestBid - i * tick, p.priceDecimals), volumeOf(i)]);
      if (!asksEmpty) asks.push([round(bestAsk + i * tick, p.priceDecimals), volumeOf(50 + i)]);
    }
    return { seq, tickTimeMs: changedAt, bids, asks };
  }

  /** Whether `code` has an A-share limit day (empty book side possible) on the local day of `tMs`, and which way. */
  limitDirection(code: string, tMs: number): number {
    const s = this.#state(code);
    return s.p.productClass === 'cn-stock' ? this.#cnDay(s, tMs).dir : 0;
  }

  #state(code: string): ProductState {
    const s = this.#products.get(code);
    if (s === undefined) throw new RangeError(`unknown product code ${JSON.stringify(code)}`);
    return s;
  }

  #bookOffset(s: ProductState, n: number): number {
    return hash32(s.h, 0x0ff, n) % Math.max(1, Math.floor(s.p.bookIntervalMs / 2));
  }

  #coarse(s: ProductState, t: number): number {
    let log = s.logBase;
    for (let k = 0; k < SCALES_MS.length; k++) {
      const l = SCALES_MS[k]!;
      const i = Math.floor(t / l);
      const f = (t - i * l) / l;
      const a = signedUnit(hash32(s.h, k, i));
      log += s.amps[k]! * (f === 0 ? a : a + (signedUnit(hash32(s.h, k, i + 1)) - a) * f);
    }
    return log;
  }

  #fine(s: ProductState, knot: number): number {
    return s.fineAmp * signedUnit(hash32(s.h, 99, knot));
  }

  /** Raw log price at instant t (no A-share clamp). */
  #rawLog(s: ProductState, t: number): number {
    const k = Math.floor(t / FINE_MS);
    const f = (t - k * FINE_MS) / FINE_MS;
    const a = this.#fine(s, k);
    return this.#coarse(s, t) + (f === 0 ? a : a + (this.#fine(s, k + 1) - a) * f);
  }

  #price(s: ProductState, t: number): number {
    const log = this.#rawLog(s, t);
    return Math.exp(s.p.productClass === 'cn-stock' ? cnAdjust(this.#cnDay(s, t), t, log) : log);
  }

  #cnDay(s: ProductState, t: number): CnDay {
    const cal = s.p.calendar;
    const dayNumber = toLocal(t, cal.timeZone).dayNumber;
    const key = `${s.p.code}|${dayNumber}`;
    let day = this.#cnDays.get(key);
    if (day !== undefined) return day;
    const sessions = sessionsOfDay(cal, dayNumber);
    const openMs = sessions[0]?.[0] ?? dayNumber * DAY_MS;
    const prevClose = lastTradingInstant(cal, openMs - 1) ?? openMs - 1;
    const prevLog = this.#rawLog(s, prevClose + 1);
    // Limit days only on even local days, so the day before a limit day never is one and its
    // close (the next limit base) is the plain walk.
    const r = unit(hash32(s.h, 0x11a1, dayNumber));
    const dir = dayNumber % 2 === 0 && r < 0.08 ? (hash32(s.h, 0x11a2, dayNumber) % 2 === 0 ? 1 : -1) : 0;
    const upper = Math.exp(prevLog) * 1.1;
    const lower = Math.exp(prevLog) * 0.9;
    const endMs = fromLocalDay(dayNumber + 1, 0, cal.timeZone);
    day = { dir, openMs, endMs, upper, lower, logUpper: Math.log(upper), logLower: Math.log(lower) };
    if (this.#cnDays.size > 100_000) this.#cnDays.clear();
    this.#cnDays.set(key, day);
    return day;
  }

  /** A coarse-path evaluator that remembers each scale's knot pair, for runs of consecutive minutes. */
  #coarseRun(s: ProductState): (t: number) => number {
    const n = SCALES_MS.length;
    const knot = new Array<number>(n).fill(Number.NaN);
    const a = new Array<number>(n).fill(0);
    const b = new Array<number>(n).fill(0);
    return (t) => {
      let log = s.logBase;
      for (let k = 0; k < n; k++) {
        const l = SCALES_MS[k]!;
        const i = Math.floor(t / l);
        if (i !== knot[k]) {
          a[k] = i === knot[k]! + 1 ? b[k]! : signedUnit(hash32(s.h, k, i));
          b[k] = signedUnit(hash32(s.h, k, i + 1));
          knot[k] = i;
        }
        const f = (t - i * l) / l;
        log += s.amps[k]! * (a[k]! + (b[k]! - a[k]!) * f);
      }
      return log;
    };
  }

  /**
   * Folds the 1-minute bars of [from, to) into `acc` (log prices). `to` may fall inside a minute:
   * that minute is still forming and closes at the price at `to` (from === to gives a bar that
   * starts now: open = close, no volume). Each minute: open and close at its ends, high/low over
   * its 15-second knots. Written as one tight loop: it is the simulator's hot path (a year of
   * crypto daily bars folds ~500 000 minutes).
   */
  #fold(s: ProductState, from: number, to: number, acc: Agg | undefined): Agg | undefined {
    const coarse = this.#coarseRun(s);
    const h = s.h;
    const amp = s.fineAmp;
    const isCn = s.p.productClass === 'cn-stock';
    const vScale = 10 ** s.p.volumeDecimals;
    const mv = s.p.minuteVolume;
    let m = Math.floor(from / MINUTE) * MINUTE;
    let c0 = coarse(m);
    let k = m / FINE_MS;
    let fine0 = amp * signedUnit(hash32(h, 99, k));
    let cn: CnDay | undefined;
    do {
      const c1 = coarse(m + MINUTE);
      if (isCn && (cn === undefined || m >= cn.endMs)) cn = this.#cnDay(s, m);
      const endT = Math.min(to, m + MINUTE);
      const dc = (c1 - c0) / KNOTS;
      const open = cn === undefined ? c0 + fine0 : cnAdjust(cn, m, c0 + fine0);
      let high = open;
      let low = open;
      let close = open;
      let prevRaw = c0 + fine0;
      let nextFine = fine0;
      for (let j = 1; j <= KNOTS; j++) {
        const t = m + j * FINE_MS;
        const fj = amp * signedUnit(hash32(h, 99, k + j));
        nextFine = fj;
        const raw = c0 + dc * j + fj;
        if (t > endT) {
          // The forming minute: the price now lies between the last knot and this one.
          const f = (endT - (t - FINE_MS)) / FINE_MS;
          if (f > 0) {
            const r = prevRaw + (raw - prevRaw) * f;
            close = cn === undefined ? r : cnAdjust(cn, endT, r);
            if (close > high) high = close;
            if (close < low) low = close;
          }
          break;
        }
        const log = cn === undefined ? raw : cnAdjust(cn, t, raw);
        if (log > high) high = log;
        if (log < low) low = log;
        close = log;
        prevRaw = raw;
      }
      const frac = (endT - m) / MINUTE;
      const volume =
        Math.round(mv * (0.3 + 1.4 * unit(hash32(h, 0x701, m / MINUTE))) * frac * vScale) / vScale;
      const turnover = Math.round(volume * Math.exp((open + high + low + close) / 4) * 100) / 100;
      if (acc === undefined) acc = { open, high, low, close, volume, turnover };
      else {
        if (high > acc.high) acc.high = high;
        if (low < acc.low) acc.low = low;
        acc.close = close;
        acc.volume += volume;
        acc.turnover += turnover;
      }
      c0 = c1;
      fine0 = nextFine;
      k += KNOTS;
      m += MINUTE;
    } while (m < to);
    return acc;
  }

  /** Aggregate of every trading minute in [from, min(to, now)), using cached closed days. */
  #aggRange(s: ProductState, from: number, to: number, now: number): Agg | undefined {
    const cal = s.p.calendar;
    const end = Math.min(to, now);
    if (end < from) return undefined;
    if (end === from) return this.#fold(s, from, from, undefined); // a bar that starts right now
    let acc: Agg | undefined;
    const first = toLocal(from, cal.timeZone).dayNumber;
    const last = toLocal(end - 1, cal.timeZone).dayNumber;
    for (let d = first; d <= last; d++) {
      const sessions = sessionsOfDay(cal, d);
      if (sessions.length === 0) continue;
      const dayOpen = sessions[0]![0];
      const dayClose = sessions.at(-1)![1];
      if (from <= dayOpen && end >= dayClose) {
        const key = `${s.fingerprint}|${d}`;
        let day = this.#dayCache.get(key);
        if (day === undefined) {
          day = null;
          for (const [a, b] of sessions) day = this.#fold(s, a, b, day ?? undefined) ?? null;
          if (this.#dayCache.size > 200_000) this.#dayCache.clear();
          this.#dayCache.set(key, day);
        }
        if (day !== null) acc = merge(acc, day);
        continue;
      }
      if (from <= dayOpen) {
        // The day so far (a forming daily, weekly or monthly bar): extend a cached prefix by the
        // minutes since the last call instead of folding the whole day again on every poll.
        const dayAgg = this.#dayPrefix(s, d, sessions, end);
        if (dayAgg !== undefined) acc = merge(acc, dayAgg);
        continue;
      }
      for (const [a, b] of sessions) {
        const lo = Math.max(a, from);
        const hi = Math.min(b, end);
        if (lo < hi) acc = this.#fold(s, lo, hi, acc);
      }
    }
    return acc;
  }

  /** Fold of local day `d`'s trading minutes before `end` (a private copy), via the shared prefix cache. */
  #dayPrefix(
    s: ProductState,
    d: number,
    sessions: readonly [number, number][],
    end: number,
  ): Agg | undefined {
    const key = `${s.fingerprint}|${d}`;
    const endFloor = Math.floor(end / MINUTE) * MINUTE;
    const cached = SHARED_PREFIX_CACHE.get(key);
    const usable = cached !== undefined && cached.uptoMs <= endFloor;
    let upto = usable ? cached.uptoMs : sessions[0]![0];
    let agg = usable && cached.agg !== undefined ? { ...cached.agg } : undefined;
    for (const [a, b] of sessions) {
      const lo = Math.max(a, upto);
      const hi = Math.min(b, endFloor);
      if (lo < hi) agg = this.#fold(s, lo, hi, agg);
    }
    upto = Math.max(upto, endFloor);
    if (usable || cached === undefined) {
      if (SHARED_PREFIX_CACHE.size > 100_000) SHARED_PREFIX_CACHE.clear();
      SHARED_PREFIX_CACHE.set(key, { uptoMs: upto, agg: agg === undefined ? undefined : { ...agg } });
    }
    // The minute still forming.
    for (const [a, b] of sessions) {
      const lo = Math.max(a, endFloor);
      const hi = Math.min(b, end);
      if (lo < hi) agg = this.#fold(s, lo, hi, agg);
    }
    return agg;
  }

  #bar(s: ProductState, klineType: number, period: SimBarPeriod, now: number): SimBar | undefined {
    const from = Math.max(period.tradesFromMs, this.#historyStartMs);
    const closed = period.endMs <= now;
    const key = `${s.p.code}|${klineType}|${period.startMs}`;
    let agg: Agg | null | undefined = closed ? this.#barCache.get(key) : undefined;
    if (agg === undefined) {
      agg = this.#aggRange(s, from, period.endMs, now) ?? null;
      if (closed) {
        if (this.#barCache.size > 200_000) this.#barCache.clear();
        this.#barCache.set(key, agg);
      }
    }
    if (agg === null) return undefined;
    return {
      startMs: period.startMs,
      endMs: period.endMs,
      open: Math.exp(agg.open),
      high: Math.exp(agg.high),
      low: Math.exp(agg.low),
      close: Math.exp(agg.close),
      volume: agg.volume,
      turnover: agg.turnover,
      forming: !closed,
    };
  }
}

/** Folds `x` into `acc` (mutating `acc`, which is always a private copy; cached aggregates are never mutated). */
function merge(acc: Agg | undefined, x: Agg): Agg {
  if (acc === undefined) return { ...x };
  if (x.high > acc.high) acc.high = x.high;
  if (x.low < acc.low) acc.low = x.low;
  acc.close = x.close;
  acc.volume += x.volume;
  acc.turnover += x.turnover;
  return acc;
}

function round(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(x * f) / f;
}
