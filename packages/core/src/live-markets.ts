import { calendarOf } from './markets.js';
import { mayTradeAt } from './calendar/may-trade-at.js';
import type { CalendarId, TradingCalendar } from './calendar/trading-calendar.js';

/** Markets as the calendar groups them. */
export const LIVE_MARKETS = ['US', 'HK', 'CN', 'FX & CFD', 'crypto'] as const;
export type LiveMarket = (typeof LIVE_MARKETS)[number];

/** One market's part of a live estimate (`LiveEstimate.markets`). */
export interface MarketLiveEstimate {
  readonly market: LiveMarket;
  /** Series (code × kline type) of this market. */
  readonly series: number;
  /** Share of a week its market may trade (0..1); the rest of the week its series cost no request. */
  readonly tradingShare: number;
  /** Refresh period of its series while it trades (ms), at the busiest hour of the week. */
  readonly refreshWhileTradingMs: number;
}

const MARKET_OF: Record<CalendarId, LiveMarket> = {
  XNYS: 'US',
  XNAS: 'US',
  XHKG: 'HK',
  XSHG: 'CN',
  XSHE: 'CN',
  FX: 'FX & CFD',
  CRYPTO: 'crypto',
};
const DAY_MS = 86_400_000;
/** A reference week (Monday 2026-11-16 00:00 UTC, no holiday in it), sampled every 5 minutes. */
const WEEK_START_MS = Date.UTC(2026, 10, 16);
/** Length of one sample of the reference week (ms). */
export const WEEK_STEP_MS = 5 * 60_000;
const STEPS = (7 * DAY_MS) / WEEK_STEP_MS;

/**
 * A universe over the reference week with close-aware polling: its series by market, and at each
 * 5-minute step the markets that may trade in it and the `/batch-kline` requests a cycle needs for their
 * series alone (groups packed to the plan's cap).
 */
export class LiveWeek {
  readonly #markets = new Map<LiveMarket, { series: number; calendar: TradingCalendar }>();
  readonly #open: LiveMarket[][] = [];
  readonly #requests: number[] = [];

  constructor(codes: readonly string[], klineTypes: number, groupsPerRequest: number) {
    for (const code of codes) {
      const calendar = calendarOf(code);
      const market = MARKET_OF[calendar.id];
      const held = this.#markets.get(market);
      if (held === undefined) this.#markets.set(market, { series: klineTypes, calendar });
      else held.series += klineTypes;
    }
    for (let i = 0; i < STEPS; i++) {
      const t = WEEK_START_MS + i * WEEK_STEP_MS;
      // A step counts when the market may trade at any time in it (its start or its last
      // instant: no session or break is shorter than a step), so a budget is never under-counted.
      const open = [...this.#markets].filter(
        ([, m]) => mayTradeAt(m.calendar, t) || mayTradeAt(m.calendar, t + WEEK_STEP_MS - 1),
      );
      this.#open.push(open.map(([market]) => market));
      this.#requests.push(Math.ceil(open.reduce((n, [, m]) => n + m.series, 0) / groupsPerRequest));
    }
  }

  /**
   * The most cycle requests in any 24 hours of the week (summed per step, the week read as a
   * loop): times `WEEK_STEP_MS / refreshPeriodMs` cycles a step, the busiest day's requests.
   */
  busiestDayCycleRequests(): number {
    const window = DAY_MS / WEEK_STEP_MS;
    let sum = 0;
    for (let i = 0; i < window; i++) sum += this.#requests[i]!;
    let max = sum;
    for (let i = window; i < STEPS + window; i++) {
      sum += this.#requests[i % STEPS]! - this.#requests[i - window]!;
      max = Math.max(max, sum);
    }
    return max;
  }

  /**
   * Per market, how much of the week it may trade and its refresh period while it does: at each step
   * a cycle is the requests of the markets then trading, at `msPerRequest` each; the slowest counts.
   */
  byMarket(msPerRequest: number): MarketLiveEstimate[] {
    const stats = new Map<LiveMarket, { tradingSteps: number; worstMs: number }>();
    for (const market of this.#markets.keys()) stats.set(market, { tradingSteps: 0, worstMs: 0 });
    for (let i = 0; i < STEPS; i++) {
      const cycleMs = this.#requests[i]! * msPerRequest;
      for (const market of this.#open[i]!) {
        const s = stats.get(market)!;
        s.tradingSteps++;
        s.worstMs = Math.max(s.worstMs, cycleMs);
      }
    }
    return LIVE_MARKETS.filter((m) => this.#markets.has(m)).map((market) => ({
      market,
      series: this.#markets.get(market)!.series,
      tradingShare: stats.get(market)!.tradingSteps / STEPS,
      refreshWhileTradingMs: Math.ceil(stats.get(market)!.worstMs),
    }));
  }
}
