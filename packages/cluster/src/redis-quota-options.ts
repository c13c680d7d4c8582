import {
  CLIENT_DEFAULTS,
  PLAN_SCHEDULER_DEFAULTS,
  type DailyWindow,
  type EndpointKind,
  type PlanLimits,
} from '@quoteflow/core';
import type { RedisLike } from './internal/redis-connection.js';

/** Options of {@link RedisQuota}; defaults in {@link REDIS_QUOTA_DEFAULTS}. */
export interface RedisQuotaOptions {
  /** A `redis://` URL (the quota opens and owns a connection) or an ioredis client (adopted, not closed). */
  readonly redis: RedisLike;
  /** The token whose plan is shared. Only a SHA-256 of it reaches Redis (as the key namespace). */
  readonly token: string;
  /** The plan's limits (`planLimits(plan)`); every worker of the token must pass the same. */
  readonly limits: PlanLimits;
  /** Safety margin added to every window, in ms (same meaning as `PlanScheduler`'s). */
  readonly marginMs?: number;
  /**
   * A reservation older than this when the request would leave (the event loop stalled in
   * between) must not be used: {@link RedisQuota.lagMs} tells. Part of the in-flight bound. In ms.
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
  /** Called on state changes (Redis lost, back, data lost); never with the token. */
  readonly onEvent?: (event: RedisQuotaEvent) => void;
}

/** What {@link RedisQuotaOptions.onEvent} reports. */
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
 * Defaults of {@link RedisQuotaOptions}.
 *
 * - `marginMs: 10`: every request counts until it settled (see {@link RedisQuota}), so no network
 *   or event-loop delay needs covering; the margin only absorbs millisecond rounding and the
 *   drift between the Redis host's clock and the service's over one window.
 * - `staleAfterMs: 1_000`: a reservation not used within a second is not used at all (it is
 *   settled at once and a new one is made); with settle counting, a late send cannot cause a
 *   refusal, so this only bounds how long an unsettled entry can matter.
 * - `settlePollMs: 10`: what a request in flight of another worker can add to the next start
 *   (half of it on average: 0.5 % of a 1 s window).
 */
export const REDIS_QUOTA_DEFAULTS = {
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
} as const;

/** While Redis stays away, `redis-unavailable` is reported again this often, in ms. */
export const REDIS_UNAVAILABLE_REMINDER_MS = 5_000;

/** A snapshot of {@link RedisQuota.stats}. */
export interface RedisQuotaStats {
  readonly reserved: number;
  readonly waiting: number;
  /** Reservation attempts that Redis refused for now (a rule, a pause or a hold). */
  readonly refusedAttempts: number;
  readonly redisAvailable: boolean;
  /** Periods in which Redis could not be reached, and their total length in ms. */
  readonly outages: number;
  readonly outageMs: number;
  readonly epoch: string | undefined;
}

/**
 * A successful reservation: when Redis recorded the start (server clock). Hand it back to
 * {@link RedisQuota.settle} exactly once, when the request's answer (or failure) came back, or at
 * once when the request is not sent.
 */
export interface Reservation {
  readonly serverMs: number;
  readonly endpoint: EndpointKind;
  /** Unique id of the reservation (its member in Redis); carries nothing of the token. */
  readonly id: string;
}
