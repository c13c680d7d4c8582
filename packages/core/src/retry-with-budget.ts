import { monotonicClock, sleepOn, type Clock } from './clock.js';
import { InvalidOptionError } from './errors.js';
import { backoffDelayMs } from './internal/backoff-delay.js';

/** Options of {@link retryWithBudget}; defaults in {@link RETRY_WITH_BUDGET_DEFAULTS}. */
export interface RetryWithBudgetOptions {
  /**
   * How long retrying may go on, in ms of `clock` from the first attempt: no attempt starts after
   * it, and the wait before the last one is cut short to end at it (so the last attempt comes at
   * the end of the budget, not a backoff past it). `Infinity`: attempts alone bound it.
   */
  readonly budgetMs: number;
  /** At most this many attempts. @defaultValue Infinity (the budget alone bounds them) */
  readonly maxAttempts?: number;
  /** Ceiling of the wait after the first failure; doubles per attempt. @defaultValue 100 ms */
  readonly baseDelayMs?: number;
  /** Ceiling of any wait. @defaultValue 5,000 ms */
  readonly maxDelayMs?: number;
  /**
   * `'full'`: each wait is random in [0, ceiling) (exponential backoff with full jitter, so many
   * callers that failed together do not retry together); `'none'`: each wait is the ceiling (a
   * steady poll when `baseDelayMs` equals `maxDelayMs`). @defaultValue 'full'
   */
  readonly jitter?: 'full' | 'none';
  /**
   * The wait after a failure, instead of the backoff (`baseDelayMs`, `maxDelayMs`, `jitter`): for
   * a poll whose pace the failure tells (a lease it waits out). Still cut short at the budget's end.
   */
  readonly delayMs?: (error: unknown, attempt: number) => number;
  /** Random numbers in [0, 1) for the jitter. @defaultValue Math.random */
  readonly random?: () => number;
  /**
   * Whether a failure may be retried; the others are thrown at once.
   * @defaultValue every failure but one that says `retryable: false` (a {@link QuoteflowError}'s verdict)
   */
  readonly retryable?: (error: unknown, attempt: number) => boolean;
  /**
   * The clock of the budget and the waits. @defaultValue {@link monotonicClock} (real time, never
   * stepped); pass the pipeline's clock when the waits are quota or market time.
   */
  readonly clock?: Clock;
  /**
   * Stops the retries: the wait under way ends and the signal's reason is thrown (an attempt that
   * fails once it aborted is not retried: its failure is thrown).
   */
  readonly signal?: AbortSignal;
  /** Told of every failure that will be retried, with the wait before the next attempt. */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** Defaults of {@link RetryWithBudgetOptions}. */
export const RETRY_WITH_BUDGET_DEFAULTS = {
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  jitter: 'full',
} as const;

/**
 * Calls `attempt` (with its number, from 1) until it resolves, waiting between failures with
 * exponential backoff, for as long as the failures are retryable, the time budget lasts and
 * attempts are left. Then throws the last failure as it is (the caller knows how many attempts it
 * saw and wraps it where that adds meaning); an abort stops it (see `signal`). The one retry and
 * poll loop of quoteflow: a wait for a condition is an attempt that throws while it does not hold.
 *
 * @throws InvalidOptionError for a budget, count or delay that is not a number >= 0 (count >= 1)
 * @example
 * ```ts
 * // Ask Redis every 500 ms, for 30 s at most.
 * await retryWithBudget(() => redis.ping(), { budgetMs: 30_000, baseDelayMs: 500, maxDelayMs: 500, jitter: 'none' });
 * ```
 */
export async function retryWithBudget<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryWithBudgetOptions,
): Promise<T> {
  const o = { ...RETRY_WITH_BUDGET_DEFAULTS, ...options };
  const check = (name: string, value: number, min: number): void => {
    if (typeof value !== 'number' || Number.isNaN(value) || value < min)
      throw new InvalidOptionError(
        name,
        `retryWithBudget: "${name}" must be a number >= ${min}, got ${String(value)}`,
      );
  };
  check('budgetMs', o.budgetMs, 0);
  check('maxAttempts', o.maxAttempts, 1);
  check('baseDelayMs', o.baseDelayMs, 0);
  check('maxDelayMs', o.maxDelayMs, 0);
  const clock = o.clock ?? monotonicClock;
  const retryable =
    o.retryable ?? ((error: unknown) => (error as { retryable?: unknown } | null)?.retryable !== false);
  const random = o.random ?? Math.random;
  const backoff = (n: number): number =>
    o.jitter === 'none'
      ? Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (n - 1))
      : backoffDelayMs(n, o.baseDelayMs, o.maxDelayMs, random);
  const endMs = clock.now() + o.budgetMs;
  for (let n = 1; ; n++) {
    o.signal?.throwIfAborted();
    try {
      return await attempt(n);
    } catch (error) {
      const leftMs = endMs - clock.now();
      if (o.signal?.aborted === true || n >= o.maxAttempts || leftMs <= 0 || !retryable(error, n))
        throw error;
      const delayMs = Math.min(leftMs, o.delayMs?.(error, n) ?? backoff(n));
      o.onRetry?.(error, n, delayMs);
      await sleepOn(clock, delayMs, o.signal);
    }
  }
}
