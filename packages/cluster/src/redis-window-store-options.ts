import { DAILY_WINDOWS, type Clock, type DailyWindow, type PlanLimits } from '@quoteflow/core';
import { CLIENT_DEFAULTS, PLAN_SCHEDULER_DEFAULTS } from '@quoteflow/core/internal';
import { ClusterError } from './cluster-error.js';
import type { RedisLike } from './internal/redis-connection.js';

/** Options of {@link RedisWindowStore}; defaults in {@link REDIS_WINDOW_STORE_DEFAULTS}. */
export interface RedisWindowStoreOptions {
  /** A `redis://` URL (the quota opens and owns a connection) or an ioredis client (adopted, not closed). */
  readonly redis: RedisLike;
  /** The token whose plan is shared. Only a SHA-256 of it reaches Redis (as the key namespace). */
  readonly token: string;
  /** The plan's limits (`planLimits(plan)`); every worker of the token must pass the same. */
  readonly limits: PlanLimits;
  /** Safety margin added to every window, in ms (same meaning as `PlanScheduler`'s). */
  readonly marginMs?: number;
  /**
   * A start granted later than this after the scheduler asked for it (Redis or the event loop
   * stalled in between) is not sent (`WindowStore.sendWithinMs`). Part of the in-flight bound. In ms.
   */
  readonly staleAfterMs?: number;
  /**
   * The client's request timeouts (`QuoteflowClient`'s `timeouts`): no request is still on its way
   * to the service longer than its timeout after it left. Part of the in-flight bound.
   */
  readonly timeouts?: { readonly requestMs?: number; readonly suspensionMs?: number };
  /**
   * While another worker's request in flight is what blocks, ask Redis again after this long, in
   * ms (its settle is polled for; this process's own settles wake its waiters at once).
   */
  readonly settlePollMs?: number;
  /** IANA time zone whose midnight resets the daily total. */
  readonly dailyResetTimeZone?: string;
  /**
   * Which reading of the daily total applies: a reset at midnight of `dailyResetTimeZone`, any 24
   * hours, or both (the spec does not say; the default is the stricter, as `PlanScheduler`'s).
   */
  readonly dailyWindow?: DailyWindow;
  /** First part of every Redis key. */
  readonly keyPrefix?: string;
  /** A Redis command that has not answered after this long counts as Redis being away, in ms. */
  readonly commandTimeoutMs?: number;
  /**
   * After Redis lost its data (restart without persistence, flush), no request starts for this
   * long, in ms, so starts recorded before the loss have left every window, unless every
   * participant seen active lately re-seeded what it sent sooner (see {@link recoveryGraceMs}).
   * Default: the longest window of the plan plus the margin.
   */
  readonly lostStateHoldMs?: number;
  /**
   * After a loss of Redis's data, the hold ends no sooner than this, in ms, and only once every
   * participant seen active lately has re-seeded its starts: the time every live worker gets to
   * notice the loss (it looks every {@link watchIntervalMs}) and re-seed.
   */
  readonly recoveryGraceMs?: number;
  /**
   * How often the quota looks at the shared state, in ms: which participants are active, the
   * day's count, and whether the data was lost (so an idle worker re-seeds too).
   */
  readonly watchIntervalMs?: number;
  /**
   * How late a worker waiting for a start may come back for it and keep its place in the waiting
   * list of its windows, in ms (see `RedisWindowStore`): longer tolerates slower workers, shorter
   * frees sooner a start promised to a worker that died or no longer wants it.
   */
  readonly queueGraceMs?: number;
  /** Called on state changes (Redis lost, back, data lost); never with the token. */
  readonly onEvent?: (event: RedisQuotaEvent) => void;
  /**
   * The clock of this process's side (the scheduler's: waits after a refusal, outage times). The
   * windows themselves run on the Redis server's clock, which every host shares.
   */
  readonly clock?: Clock;
}

/** What {@link RedisWindowStoreOptions.onEvent} reports. */
export type RedisQuotaEvent =
  | {
      readonly type: 'redis-unavailable';
      readonly atMs: number;
      readonly error: string;
      /** On the reminders repeated every {@link REDIS_UNAVAILABLE_REMINDER_MS} of an outage: how long it has lasted. */
      readonly downMs?: number;
    }
  | { readonly type: 'redis-available'; readonly atMs: number; readonly downMs: number }
  | { readonly type: 'state-reset'; readonly atMs: number; readonly epoch: string };

/**
 * Defaults of {@link RedisWindowStoreOptions}.
 *
 * - `marginMs: 10`: every request counts until it settled (see `RedisWindowStore`), so no network
 *   or event-loop delay needs covering; the margin only absorbs millisecond rounding and the
 *   drift between the Redis host's clock and the service's over one window.
 * - `staleAfterMs: 1_000`: a reservation not used within a second is not used at all (it is
 *   settled at once and a new one is made); with settle counting, a late send cannot cause a
 *   refusal, so this only bounds how long an unsettled entry can matter.
 * - `settlePollMs: 10`: what a request in flight of another worker can add to the next start
 *   (half of it on average: 0.5 % of a 1 s window).
 * - `queueGraceMs: 1_000`: a worker on a loaded host (an event loop a few hundred ms late) keeps
 *   its turn; a start promised to a worker that died waits at most that long past its retry.
 */
export const REDIS_WINDOW_STORE_DEFAULTS = {
  marginMs: 10,
  staleAfterMs: 1_000,
  timeouts: CLIENT_DEFAULTS.timeouts,
  settlePollMs: 10,
  dailyResetTimeZone: PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
  dailyWindow: PLAN_SCHEDULER_DEFAULTS.dailyWindow,
  keyPrefix: 'qf',
  commandTimeoutMs: 1_000,
  recoveryGraceMs: 1_500,
  watchIntervalMs: 500,
  queueGraceMs: 1_000,
} as const;

/** The shortest `staleAfterMs` accepted, in ms. */
const MIN_STALE_AFTER_MS = 100;

/** While Redis stays away, `redis-unavailable` is reported again this often, in ms. */
export const REDIS_UNAVAILABLE_REMINDER_MS = 5_000;

/** A snapshot of `RedisWindowStore.stats()`. */
export interface RedisWindowStoreStats {
  /** Starts Redis granted to this process. */
  readonly acquired: number;
  /** Attempts that Redis refused for now (a rule, a pause or a hold). */
  readonly refusedAttempts: number;
  readonly redisAvailable: boolean;
  /** Periods in which Redis could not be reached, and their total length in ms. */
  readonly outages: number;
  readonly outageMs: number;
  /**
   * Acquire replies lost (a command timeout, a dropped connection): the script may have recorded
   * the start, which then counts against the plan though it never left (the safe direction).
   */
  readonly lostReplies: number;
  readonly epoch: string | undefined;
}

/** The options with defaults applied, checked. */
export interface ResolvedRedisWindowStoreOptions {
  readonly marginMs: number;
  readonly staleAfterMs: number;
  readonly settlePollMs: number;
  readonly timeouts: { readonly requestMs: number; readonly suspensionMs: number };
  readonly dailyResetTimeZone: string;
  readonly dailyWindow: DailyWindow;
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  readonly recoveryGraceMs: number;
  readonly watchIntervalMs: number;
  readonly queueGraceMs: number;
}

/** @throws ClusterError `QF_INVALID_OPTION` naming the option that is out of range. */
export function resolveRedisWindowStoreOptions(
  options: RedisWindowStoreOptions,
): ResolvedRedisWindowStoreOptions {
  const d = REDIS_WINDOW_STORE_DEFAULTS;
  const resolved: ResolvedRedisWindowStoreOptions = {
    marginMs: options.marginMs ?? d.marginMs,
    staleAfterMs: options.staleAfterMs ?? d.staleAfterMs,
    settlePollMs: options.settlePollMs ?? d.settlePollMs,
    timeouts: {
      requestMs: options.timeouts?.requestMs ?? d.timeouts.requestMs,
      suspensionMs: options.timeouts?.suspensionMs ?? d.timeouts.suspensionMs,
    },
    dailyResetTimeZone: options.dailyResetTimeZone ?? d.dailyResetTimeZone,
    dailyWindow: options.dailyWindow ?? d.dailyWindow,
    keyPrefix: options.keyPrefix ?? d.keyPrefix,
    commandTimeoutMs: options.commandTimeoutMs ?? d.commandTimeoutMs,
    recoveryGraceMs: options.recoveryGraceMs ?? d.recoveryGraceMs,
    watchIntervalMs: options.watchIntervalMs ?? d.watchIntervalMs,
    queueGraceMs: options.queueGraceMs ?? d.queueGraceMs,
  };
  const fail = (message: string): never => {
    throw new ClusterError('QF_INVALID_OPTION', `RedisWindowStore: ${message}`);
  };
  const finite = (name: string, value: number, min: number, strict = false) => {
    if (!Number.isFinite(value) || (strict ? !(value > min) : !(value >= min)))
      fail(`"${name}" must be a finite number ${strict ? '>' : '>='} ${min}, got ${value}`);
  };
  if (typeof options.token !== 'string' || options.token === '') fail('"token" must be a non-empty string');
  finite('marginMs', resolved.marginMs, 0);
  if (!(resolved.commandTimeoutMs > 0))
    fail(`"commandTimeoutMs" must be > 0, got ${resolved.commandTimeoutMs}`);
  // Shorter than a loaded round trip to Redis, every grant would come too late to be sent.
  finite('staleAfterMs', resolved.staleAfterMs, MIN_STALE_AFTER_MS);
  finite('settlePollMs', resolved.settlePollMs, 1);
  finite('timeouts.requestMs', resolved.timeouts.requestMs, 0, true);
  finite('timeouts.suspensionMs', resolved.timeouts.suspensionMs, 0, true);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: resolved.dailyResetTimeZone });
  } catch {
    fail(
      `"dailyResetTimeZone" must be an IANA time zone, got ${JSON.stringify(resolved.dailyResetTimeZone)}`,
    );
  }
  if (!(DAILY_WINDOWS as readonly string[]).includes(resolved.dailyWindow))
    fail(
      `"dailyWindow" must be 'calendar', 'rolling' or 'both', got ${JSON.stringify(resolved.dailyWindow)}`,
    );
  finite('recoveryGraceMs', resolved.recoveryGraceMs, 0);
  finite('watchIntervalMs', resolved.watchIntervalMs, 10);
  finite('queueGraceMs', resolved.queueGraceMs, 0);
  return resolved;
}
