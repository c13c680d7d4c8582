import type { PlanLimits } from '../plans.js';
import type { Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import type { WindowStore } from './window-store.js';
import { DAILY_WINDOWS, type DailyWindow } from './internal/plan-windows.js';

/** Options of {@link PlanScheduler}; every field has a default in {@link PLAN_SCHEDULER_DEFAULTS}. */
export interface PlanSchedulerOptions {
  /**
   * Safety margin added to every window, in ms: starts are spaced as if each window were this much
   * longer, so a request whose predecessor was delayed by up to this much in the network still
   * cannot arrive too close to it.
   */
  readonly marginMs?: number;
  /**
   * The instant a request counts at in the plan's windows. The service counts arrival times, and a
   * request arrives between its send and its answer: `'settle'` counts it until its answer came
   * back, so no network delay can ever make two requests arrive too close (safe by construction;
   * costs round-trip time per window: utilisation `windowMs / (windowMs + margin + round trip)`).
   * `'start'` counts send times and relies on `marginMs` alone to cover jitter (faster on a slow
   * link, but a delay beyond the margin can draw a refusal).
   */
  readonly countFrom?: 'settle' | 'start';
  /** IANA time zone whose midnight resets the daily total. */
  readonly dailyResetTimeZone?: string;
  /**
   * How the plan's daily total is read, which the spec does not say: `'calendar'`, reset at
   * midnight of `dailyResetTimeZone`; `'rolling'`, at most `perDay` in any 24 hours; `'both'`,
   * each enforced, so at every instant the stricter one holds.
   */
  readonly dailyWindow?: DailyWindow;
  /** Requests in flight at once (started, not yet settled); `Infinity` for no cap. */
  readonly maxInFlight?: number;
  /** First pause after the service answers "rate limit", in ms; doubles per repeated report. */
  readonly rateLimitBackoffMs?: number;
  /** Longest pause after repeated "rate limit" answers, in ms. */
  readonly rateLimitMaxBackoffMs?: number;
  /**
   * After a pause, starts are paced at half the sustained rate for this long, then at the
   * sustained rate for as long again, so a backlog never leaves in a burst. A report during that
   * time doubles the next pause.
   */
  readonly recoveryMs?: number;
  /**
   * Fraction of a rule's even spacing (`(windowMs + marginMs) / limit`) kept between two starts
   * that rule counts: 0 lets a whole window's limit start in one instant, 1 paces starts evenly.
   * It does not change the sustained rate, only how bursts leave.
   */
  readonly smoothing?: number;
  /**
   * Fraction of starts reserved for `'backfill'` while it has work queued, from 0 (exclusive) to
   * 0.5: live work goes first, but at least one start in every `ceil(1 / backfillShare)` goes to
   * backfill as soon as a backfill job can start. Backfill also takes every start live work leaves.
   */
  readonly backfillShare?: number;
  /** Time source and timers (virtual in tests). */
  readonly clock?: Clock;
  /** Where the start-time logs live (in process by default; shared across processes later). */
  readonly store?: WindowStore;
}

/** {@link PlanSchedulerOptions} with every default filled in (`clock` and `store` aside). */
export type ResolvedPlanSchedulerOptions = Required<Omit<PlanSchedulerOptions, 'clock' | 'store'>>;

/**
 * Defaults of {@link PlanSchedulerOptions}.
 *
 * - `marginMs: 25`: jitter between two requests on one keep-alive connection is a few ms on a LAN
 *   and rarely above 10 ms across a region; 25 ms covers that plus timer lateness and still leaves
 *   the binding 1 s rules at 1000 / 1025 = 0.976 of the allowed rate (target >= 0.95).
 * - `dailyResetTimeZone: 'Asia/Shanghai'`: the provider counts days in China time (its ret codes,
 *   A-share focus and Shanghai suspension source point there), and the zone has no DST, so every
 *   day is exactly 24 h. Set it to the zone your provider account states.
 * - `dailyWindow: 'both'`: the spec gives a per-day total but not whether it resets at a zone's
 *   midnight or rolls; enforcing both never draws a refusal under either reading. It binds only
 *   where the day's total is below the per-second rules' (Free: 1,000 a day).
 * - `smoothing: 0.5`: a burst of a plan's whole per-second limit leaves over half a second instead
 *   of in one instant. Requests that leave together queue together (in the event loop, the
 *   connection pool, the network), and the last of a burst can arrive later than the margin
 *   covers; measured against the simulator, an unspread premium burst of 10 arrived over 680 ms.
 * - `countFrom: 'settle'`: never over the plan, whatever the network does (see the option).
 * - `maxInFlight: 32`: far above what any plan needs (20/s × a 1 s response), but bounds sockets
 *   and memory if the service stalls.
 * - `backfillShare: 0.2` (1 start in 5): a history sync keeps moving at a fifth of the plan
 *   (about 2 requests/s on premium, one every 5 s on basic) beside a live poller that wants every
 *   request, and the poller keeps four fifths of its rate while the backfill lasts (its period
 *   grows by a quarter). Nothing is reserved while no backfill is queued.
 */
export const PLAN_SCHEDULER_DEFAULTS = {
  marginMs: 25,
  countFrom: 'settle',
  dailyResetTimeZone: 'Asia/Shanghai',
  dailyWindow: 'both',
  maxInFlight: 32,
  rateLimitBackoffMs: 2_000,
  rateLimitMaxBackoffMs: 60_000,
  recoveryMs: 10_000,
  smoothing: 0.5,
  backfillShare: 0.2,
} as const;

/**
 * `options` with the defaults filled in, checked against `limits`.
 *
 * @throws InvalidOptionError (`QF_INVALID_OPTION`) when an option or a limit is out of range.
 */
export function resolvePlanSchedulerOptions(
  limits: PlanLimits,
  options: PlanSchedulerOptions,
): ResolvedPlanSchedulerOptions {
  const resolved: ResolvedPlanSchedulerOptions = {
    marginMs: options.marginMs ?? PLAN_SCHEDULER_DEFAULTS.marginMs,
    countFrom: options.countFrom ?? PLAN_SCHEDULER_DEFAULTS.countFrom,
    dailyResetTimeZone: options.dailyResetTimeZone ?? PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
    dailyWindow: options.dailyWindow ?? PLAN_SCHEDULER_DEFAULTS.dailyWindow,
    maxInFlight: options.maxInFlight ?? PLAN_SCHEDULER_DEFAULTS.maxInFlight,
    rateLimitBackoffMs: options.rateLimitBackoffMs ?? PLAN_SCHEDULER_DEFAULTS.rateLimitBackoffMs,
    rateLimitMaxBackoffMs: options.rateLimitMaxBackoffMs ?? PLAN_SCHEDULER_DEFAULTS.rateLimitMaxBackoffMs,
    recoveryMs: options.recoveryMs ?? PLAN_SCHEDULER_DEFAULTS.recoveryMs,
    smoothing: options.smoothing ?? PLAN_SCHEDULER_DEFAULTS.smoothing,
    backfillShare: options.backfillShare ?? PLAN_SCHEDULER_DEFAULTS.backfillShare,
  };
  validate(limits, resolved);
  return resolved;
}

function validate(limits: PlanLimits, options: ResolvedPlanSchedulerOptions): void {
  const fail = (message: string, option = /"(\w+)"/.exec(message)?.[1] ?? 'limits') => {
    throw new InvalidOptionError(option, `PlanScheduler: ${message}`);
  };
  for (const rule of limits.rules) {
    if (!Number.isInteger(rule.limit) || rule.limit < 1 || !(rule.windowMs > 0)) {
      fail(
        `rule "${rule.id}" needs an integer limit >= 1 and windowMs > 0, got ${rule.limit} per ${rule.windowMs} ms`,
      );
    }
  }
  if (!Number.isInteger(limits.perDay) || limits.perDay < 1)
    fail(`"perDay" must be an integer >= 1, got ${limits.perDay}`);
  if (!(options.marginMs >= 0) || !Number.isFinite(options.marginMs))
    fail(`"marginMs" must be a finite number >= 0, got ${options.marginMs}`);
  if (!(options.maxInFlight >= 1))
    fail(`"maxInFlight" must be >= 1 (or Infinity), got ${options.maxInFlight}`);
  for (const name of ['rateLimitBackoffMs', 'rateLimitMaxBackoffMs', 'recoveryMs'] as const) {
    if (!(options[name] >= 0) || !Number.isFinite(options[name]))
      fail(`"${name}" must be a finite number >= 0, got ${options[name]}`);
  }
  if (!(DAILY_WINDOWS as readonly string[]).includes(options.dailyWindow))
    fail(
      `"dailyWindow" must be one of ${DAILY_WINDOWS.join(', ')}, got ${JSON.stringify(options.dailyWindow)}`,
    );
  if (!(options.smoothing >= 0 && options.smoothing <= 1))
    fail(`"smoothing" must be from 0 to 1, got ${options.smoothing}`);
  if (!(options.backfillShare > 0 && options.backfillShare <= 0.5))
    fail(`"backfillShare" must be above 0 and at most 0.5, got ${options.backfillShare}`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: options.dailyResetTimeZone });
  } catch {
    fail(`"dailyResetTimeZone" must be an IANA time zone, got ${JSON.stringify(options.dailyResetTimeZone)}`);
  }
}
