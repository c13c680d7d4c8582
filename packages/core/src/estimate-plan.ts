import type { KlineType } from './domain.js';
import { KLINE_PERIOD_MS, canPageBackwards, classifyCode } from './markets.js';
import { LiveWeek, WEEK_STEP_MS, type MarketLiveEstimate } from './live-markets.js';
import {
  MAX_KLINE_PER_REQUEST,
  PLANS,
  planLimits,
  sustainedRate,
  type EndpointKind,
  type Plan,
  type PlanLimitOverrides,
  type PlanLimits,
} from './plans.js';
import { formatDuration } from './format-duration.js';

export { LIVE_MARKETS } from './live-markets.js';
export type { LiveMarket, MarketLiveEstimate } from './live-markets.js';

/** What a user wants to keep: K-line series (codes × kline types) with N bars of history, and depth codes. */
export interface Universe {
  /** Product codes whose K-lines are synced. */
  readonly codes: readonly string[];
  /** K-line types synced for every code. */
  readonly klineTypes: readonly KlineType[];
  /** Closed bars of history per series (the forming bar is not counted). */
  readonly bars: number;
  /** Codes polled through `/depth-tick`, if any. */
  readonly depthCodes?: readonly string[];
  /** Wanted depth poll interval; the estimate never goes below what the plan allows. */
  readonly depthIntervalMs?: number;
}

/**
 * What each request costs on top of the rule's spacing when live: the scheduler keeps `marginMs`
 * and counts a request until its answer came back (one round trip), so a rule of `limit` per
 * `windowMs` sustains `limit` requests per `windowMs + marginMs + roundTripMs`.
 */
export interface PlanTiming {
  /** The scheduler's safety margin. @defaultValue 25 ms (`PLAN_SCHEDULER_DEFAULTS.marginMs`) */
  readonly marginMs?: number;
  /** Assumed round trip of one request. @defaultValue 100 ms */
  readonly roundTripMs?: number;
}

/** Defaults of {@link PlanTiming}. */
export const PLAN_TIMING_DEFAULTS = { marginMs: 25, roundTripMs: 100 } as const;

/** The backfill part of an estimate: one-off history through `/kline`. */
export interface BackfillEstimate {
  /** `/kline` requests for every series. */
  readonly requests: number;
  /** Shortest time the plan's rules allow for them (ms), sending at the binding rate. */
  readonly durationMs: number;
  /** Series that cannot reach `bars` because their class cannot page backwards (stocks: one page). */
  readonly shortSeries: number;
  /** Closed bars a series of a class that cannot page backwards gets at most. */
  readonly maxBarsWithoutPaging: number;
}

/** The live part of an estimate: `/batch-kline` polling and `/depth-tick` polling. */
export interface LiveEstimate {
  /** Groups (code × kline type) polled. */
  readonly groups: number;
  /** `/batch-kline` requests per refresh cycle, each packed to the plan's group cap. */
  readonly batchRequestsPerCycle: number;
  /**
   * How often every series is refreshed (ms): one cycle, sustainable all day long, including the
   * scheduler's margin and one round trip per request ({@link PlanTiming}).
   */
  readonly refreshPeriodMs: number;
  /**
   * The refresh period (ms) when every series is polled at every cycle, closed markets too, all day
   * within the daily budget: `refreshPeriodMs` or longer (polling without the calendar).
   */
  readonly refreshPeriodPollingAllMs: number;
  /** `/depth-tick` requests per depth poll. */
  readonly depthRequestsPerPoll: number;
  /** Depth poll period (ms), or `undefined` without depth codes. */
  readonly depthPeriodMs: number | undefined;
  /** Live requests per day at those periods, every series asked for at every cycle. */
  readonly requestsPerDay: number;
  /**
   * Live requests on the busiest day (any 24 hours) of a reference week with close-aware polling:
   * at the same periods, a cycle asks only for the series whose market may trade (depth polls as
   * they are). What the plan's daily budget has to hold.
   */
  readonly requestsPerDayByCalendar: number;
  /** `requestsPerDay` minus `requestsPerDayByCalendar`: saved that day by skipping closed markets (quieter days save more). */
  readonly requestsSavedPerDay: number;
  /**
   * Per market, with close-aware polling (each poll asks only for the series whose market may
   * trade then): how much of a week it trades, and how often its series are refreshed while it
   * does, at the busiest hour it shares with the others.
   */
  readonly markets: readonly MarketLiveEstimate[];
}

/** What a plan allows for a universe, from the same limit table the scheduler enforces. */
export interface PlanEstimate {
  readonly plan: Plan;
  /** Series (code × kline type). */
  readonly series: number;
  readonly backfill: BackfillEstimate;
  readonly live: LiveEstimate;
  /** Live requests per day as a share of the plan's daily maximum, every series polled at every cycle. */
  readonly dailyShare: number;
  /** The same with close-aware polling (`live.requestsPerDayByCalendar`): what decides the daily budget (0..1). */
  readonly dailyShareByCalendar: number;
  /** Backfill requests as a share of the plan's daily maximum (may exceed 1: then it spans days). */
  readonly backfillDailyShare: number;
  /** Whether the plan keeps every series current without skipping a bar and backfills within a day. */
  readonly fits: boolean;
  /** Why it does not fit (empty when it does). */
  readonly reasons: readonly string[];
}

const DAY_MS = 86_400_000;

/**
 * `/kline` requests needed for `bars` closed bars of one series: the first page also carries the
 * bar still forming, so `bars + 1` bars are asked for; classes that cannot page backwards get one page.
 */
export function backfillRequestsFor(code: string, bars: number): number {
  if (bars <= 0) return 0;
  if (!canPageBackwards(classifyCode(code))) return 1;
  return Math.ceil((bars + 1) / MAX_KLINE_PER_REQUEST);
}

/**
 * The shortest time (ms) in which `n` requests to `endpoint` can all have left under every
 * sliding-window rule of the plan (a burst of `limit` per window, then one window per burst) and the
 * daily maximum (a day per full budget).
 */
export function minDurationMs(limits: PlanLimits, endpoint: EndpointKind, n: number): number {
  if (n <= 0) return 0;
  let durationMs = 0;
  for (const rule of limits.rules) {
    if (rule.scope !== 'all' && rule.scope !== endpoint) continue;
    durationMs = Math.max(durationMs, (Math.ceil(n / rule.limit) - 1) * rule.windowMs);
  }
  return durationMs + Math.floor((n - 1) / limits.perDay) * DAY_MS;
}

/** The rate (requests/s) every rule that counts all endpoints allows together. */
function combinedRate(limits: PlanLimits): number {
  let rate = Number.POSITIVE_INFINITY;
  for (const rule of limits.rules)
    if (rule.scope === 'all') rate = Math.min(rate, (rule.limit * 1000) / rule.windowMs);
  return rate;
}

/**
 * What `plan` allows for `universe`, before a single request is sent: backfill requests and
 * duration, the refresh period of every series when live, the share of the daily budget, and
 * whether it fits (every series refreshed at least once per bar period of its kline type, so the
 * two bars of `/batch-kline` never skip a closed bar, and the backfill done within a day). The
 * daily budget is checked by the calendar: close-aware polling spends nothing on a closed market,
 * so a universe of stocks may refresh faster than one that trades around the clock.
 *
 * @example estimatePlan('basic', { codes: ['AAPL.US'], klineTypes: [1], bars: 100 }).live.refreshPeriodMs // 3125
 */
export function estimatePlan(
  plan: Plan,
  universe: Universe,
  overrides: PlanLimitOverrides = {},
  timing: PlanTiming = {},
): PlanEstimate {
  const limits = planLimits(plan, overrides);
  const overheadMs =
    (timing.marginMs ?? PLAN_TIMING_DEFAULTS.marginMs) +
    (timing.roundTripMs ?? PLAN_TIMING_DEFAULTS.roundTripMs);
  const series = universe.codes.length * universe.klineTypes.length;
  const backfill = estimateBackfill(limits, universe);
  const live = estimateLive(limits, universe, series, overheadMs);
  const reasons: string[] = [];
  const shortestBarMs = Math.min(...universe.klineTypes.map((k) => KLINE_PERIOD_MS[k] ?? DAY_MS));
  if (series > 0 && live.refreshPeriodMs > shortestBarMs) {
    reasons.push(
      `a refresh every ${formatDuration(live.refreshPeriodMs)} is slower than the ${formatDuration(shortestBarMs)} bars: closed bars would be skipped`,
    );
  }
  if (backfill.requests > limits.perDay)
    reasons.push(
      `the backfill needs ${backfill.requests} requests, more than the ${limits.perDay} a day allows`,
    );
  return {
    plan,
    series,
    backfill,
    live,
    dailyShare: live.requestsPerDay / limits.perDay,
    dailyShareByCalendar: live.requestsPerDayByCalendar / limits.perDay,
    backfillDailyShare: backfill.requests / limits.perDay,
    fits: reasons.length === 0,
    reasons,
  };
}

/** The backfill's `/kline` requests, the shortest time they can take, and the series it cannot complete. */
function estimateBackfill(limits: PlanLimits, universe: Universe): BackfillEstimate {
  let requests = 0;
  let shortSeries = 0;
  for (const code of universe.codes) {
    requests += backfillRequestsFor(code, universe.bars) * universe.klineTypes.length;
    if (!canPageBackwards(classifyCode(code)) && universe.bars > MAX_KLINE_PER_REQUEST - 1)
      shortSeries += universe.klineTypes.length;
  }
  return {
    requests,
    durationMs: minDurationMs(limits, 'kline', requests),
    shortSeries,
    maxBarsWithoutPaging: MAX_KLINE_PER_REQUEST - 1,
  };
}

/**
 * Live polling: the refresh period of the series (`/batch-kline` cycles) and of depth polls, each
 * paced by its own rule, then slowed together to stay within the combined rate and the day.
 */
function estimateLive(
  limits: PlanLimits,
  universe: Universe,
  series: number,
  overheadMs: number,
): LiveEstimate {
  const batchIntervalMs = limits.rules.find((r) => r.id === 'batch-kline-interval')?.windowMs ?? 1_000;
  const batchRequestsPerCycle = Math.ceil(series / limits.batchKlineGroups);
  const depthCodes = universe.depthCodes ?? [];
  const depthRequestsPerPoll = Math.ceil(depthCodes.length / limits.codesPerRequest);
  // Each rule alone: the batch interval paces /batch-kline, the endpoint rate paces /depth-tick;
  // a request holds its slot for the window plus the margin and its round trip.
  let refreshPeriodMs = batchRequestsPerCycle * (batchIntervalMs + overheadMs);
  const depthRate = sustainedRate(limits, 'depth-tick');
  let depthPeriodMs =
    depthRequestsPerPoll === 0
      ? undefined
      : Math.max(
          universe.depthIntervalMs ?? 0,
          (depthRequestsPerPoll * 1000) / depthRate +
            depthRequestsPerPoll * (overheadMs / Math.max(1, depthRate)),
        );
  const week = new LiveWeek(universe.codes, universe.klineTypes.length, limits.batchKlineGroups);
  const busiestDayCycleRequests = week.busiestDayCycleRequests();
  const depthLoad = (): number => (depthPeriodMs === undefined ? 0 : depthRequestsPerPoll / depthPeriodMs);
  // Requests per ms: every series at every cycle; and on the busiest day, closed markets skipped.
  const load = (): number =>
    (refreshPeriodMs > 0 ? batchRequestsPerCycle / refreshPeriodMs : 0) + depthLoad();
  const loadByCalendar = (): number =>
    (refreshPeriodMs > 0 ? (busiestDayCycleRequests * WEEK_STEP_MS) / refreshPeriodMs / DAY_MS : 0) +
    depthLoad();
  // Together they must stay within the rules that count every endpoint (any hour may have every
  // market open), and within the day, which close-aware polling spends only on markets that trade.
  const bounds: [() => number, number][] = [
    [load, combinedRate(limits) / 1000],
    [loadByCalendar, limits.perDay / DAY_MS],
  ];
  for (const [loadOf, allowedPerMs] of bounds) {
    const factor = loadOf() / allowedPerMs;
    if (factor > 1) {
      refreshPeriodMs *= factor;
      if (depthPeriodMs !== undefined) depthPeriodMs *= factor;
    }
  }
  refreshPeriodMs = ceilMs(refreshPeriodMs);
  if (depthPeriodMs !== undefined) depthPeriodMs = ceilMs(depthPeriodMs);
  const requestsPerDay = Math.round(load() * DAY_MS);
  const requestsPerDayByCalendar = Math.round(loadByCalendar() * DAY_MS);
  // Without the calendar the day's budget left beside depth polling paces every cycle.
  const batchBudgetPerMs = limits.perDay / DAY_MS - depthLoad();
  const refreshPeriodPollingAllMs =
    series === 0
      ? refreshPeriodMs
      : ceilMs(Math.max(refreshPeriodMs, batchRequestsPerCycle / Math.max(1e-12, batchBudgetPerMs)));
  return {
    groups: series,
    batchRequestsPerCycle,
    refreshPeriodMs,
    refreshPeriodPollingAllMs,
    depthRequestsPerPoll,
    depthPeriodMs,
    requestsPerDay,
    requestsPerDayByCalendar,
    requestsSavedPerDay: requestsPerDay - requestsPerDayByCalendar,
    markets: week.byMarket(refreshPeriodMs / Math.max(1, batchRequestsPerCycle)),
  };
}

/** Whole milliseconds, up; rounded to the microsecond first so float error adds no millisecond. */
function ceilMs(ms: number): number {
  return Math.ceil(Math.round(ms * 1000) / 1000);
}

/** The first plan (in ascending capacity) whose estimate fits `universe`, or `undefined` if none does. */
export function smallestFittingPlan(universe: Universe): Plan | undefined {
  for (const plan of PLANS) {
    if (estimatePlan(plan, universe).fits) return plan;
  }
  return undefined;
}
