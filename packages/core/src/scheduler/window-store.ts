import type { EndpointKind } from '../plans.js';

/**
 * A sliding window: at most `limit` requests in any window of `windowMs` (the scheduler passes
 * the rule's window plus its safety margin).
 *
 * The service counts ARRIVAL times, which the client never sees: a request arrives somewhere
 * between the instant it was sent and the instant its answer (or failure) came back. With
 * `anchor: 'settle'` a request counts at the latest instant it can have arrived, and as "now,
 * still arriving" while it is in flight; so the next start that this rule could refuse waits for
 * the earlier request to settle. That makes a violation impossible whatever the network jitter.
 * `anchor: 'start'` counts send times (pacing, where jitter cannot cause a refusal).
 */
export interface SlidingWindowSpec {
  readonly kind: 'sliding';
  /** Identifies the log shared by every request this rule counts (e.g. `rule:combined`). */
  readonly key: string;
  readonly windowMs: number;
  readonly limit: number;
  /** What instant a request counts at; see above. @defaultValue `'start'` */
  readonly anchor?: 'start' | 'settle';
}

/** A calendar bucket (one day of the reset time zone): at most `limit` starts until `endsAtMs`. */
export interface BucketSpec {
  readonly kind: 'bucket';
  /** Identifies the bucket (e.g. `day:<start ms>`); a new period is a new key. */
  readonly key: string;
  readonly limit: number;
  /** When the bucket expires and its count no longer matters. */
  readonly endsAtMs: number;
}

/**
 * A long sliding window with a large limit (the rolling 24 hours of the daily total: up to 1.7
 * million starts), counted per slot: at most `limit` starts in any window of `windowMs`, each start
 * counted as if made at the end of its slot of `slotMs` (later than it was made, never earlier, so
 * it counts a little longer, never shorter). A store keeps one counter per slot, not one time per
 * start. Counts from the start (no settle anchor): a window that long covers arrival delays by
 * being widened by the in-flight bound.
 */
export interface RollingWindowSpec {
  readonly kind: 'rolling';
  /** Identifies the counters shared by every request this rule counts (e.g. `rolling-day`). */
  readonly key: string;
  readonly windowMs: number;
  readonly limit: number;
  /** Width of one counter, in ms; slots end at multiples of it. */
  readonly slotMs: number;
}

export type WindowSpec = SlidingWindowSpec | BucketSpec | RollingWindowSpec;

/** A recorded start whose settle-anchored entries wait for {@link WindowStore.settle}. */
export interface StartTicket {
  /** Keys of the `anchor: 'settle'` specs the start was recorded under. */
  readonly settleKeys: readonly string[];
}

/** The outcome of {@link WindowStore.tryAcquire}. */
export type AcquireResult =
  | { readonly acquired: true; readonly ticket: StartTicket }
  | { readonly acquired: false; readonly retryAtMs: number };

/**
 * Where the scheduler keeps its start-time logs. The in-process {@link MemoryWindowStore} is the
 * default; {@link SqliteWindowStore} shares one plan among every process of a token on a machine
 * (one database file, `tryAcquire` in one immediate transaction); the cluster package's
 * `RedisWindowStore` shares it among machines (one Lua script). A store may answer
 * {@link earliestStart} early (a lower bound, e.g. while another process's request is in flight:
 * it cannot tell when that one settles); `tryAcquire` is exact and the scheduler retries at its
 * `retryAtMs`.
 *
 * `tryAcquire` and `settle` may answer asynchronously (a store across the network). The scheduler
 * then sends an acquired start only if the answer came within {@link sendWithinMs} of the call;
 * otherwise it settles the start unused and acquires again.
 *
 * @example
 * ```ts
 * const scheduler = new PlanScheduler(planLimits('premium'), { store: new MemoryWindowStore() });
 * ```
 */
export interface WindowStore {
  /**
   * The earliest instant `>= nowMs` at which one more start is allowed by every spec. With
   * `extraStarts` (key → count), answers as if that many more starts had been recorded at `nowMs`
   * under those keys (starts handed out but not yet made, or "would this start delay that one?").
   */
  earliestStart(
    specs: readonly WindowSpec[],
    nowMs: number,
    extraStarts?: ReadonlyMap<string, number>,
  ): number;
  /**
   * Checks every spec and, only when all allow a start at `nowMs`, records it under every key
   * (settle-anchored keys as in flight until {@link settle}). `endpoint` names what the start is
   * for (a store whose in-flight bound depends on the request's timeout reads it).
   */
  tryAcquire(
    specs: readonly WindowSpec[],
    nowMs: number,
    endpoint?: EndpointKind,
  ): AcquireResult | Promise<AcquireResult>;
  /**
   * The request of `ticket` settled at `atMs`: it had arrived by then (or was never sent). Call
   * exactly once. An asynchronous store's promise never rejects.
   */
  settle(ticket: StartTicket, atMs: number): void | Promise<void>;
  /** Starts recorded under `spec.key` in the window `(nowMs - windowMs, nowMs]` (or in the bucket). */
  count(spec: WindowSpec, nowMs: number): number;
  /** Forgets everything. */
  clear(): void;
  /**
   * For an asynchronous store: a start acquired by a call that answered later than this, in ms
   * after the call, is not sent (the store's in-flight bound counts from the acquisition).
   */
  readonly sendWithinMs?: number;
  /**
   * How long after its start a request may still arrive, in ms, by this store's in-flight bound:
   * a start this close to midnight counts in the next day too. Defaults to the scheduler's margin.
   */
  readonly arrivalSpanMs?: number;
}
