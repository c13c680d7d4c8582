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

export type WindowSpec = SlidingWindowSpec | BucketSpec;

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
 * default; a later shared store (Redis, one per token across processes) implements the same
 * operations, `tryAcquire` atomically (one script), so that several processes share one plan.
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
   * (settle-anchored keys as in flight until {@link settle}).
   */
  tryAcquire(specs: readonly WindowSpec[], nowMs: number): AcquireResult;
  /** The request of `ticket` settled at `atMs`: it had arrived by then. Call exactly once. */
  settle(ticket: StartTicket, atMs: number): void;
  /** Starts recorded under `spec.key` in the window `(nowMs - windowMs, nowMs]` (or in the bucket). */
  count(spec: WindowSpec, nowMs: number): number;
  /** Forgets everything. */
  clear(): void;
}
