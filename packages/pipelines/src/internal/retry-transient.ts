import { type Clock } from '@quoteflow/core';
import { retryWithBudget } from '@quoteflow/core/internal';
import { Observable, type MonoTypeOperatorFunction, type Subscription } from 'rxjs';
import { isFatal } from './error-kinds.js';

/** Options of {@link retryTransient}. */
export interface RetryTransientOptions {
  /** Wait before subscribing to the source again (its next poll), ms of `clock`. */
  readonly delayMs: number;
  /** The pipeline's clock: the wait is poll time, as the source's own interval is. */
  readonly clock: Clock;
  /** Told of every transient failure before the wait (a warning for the pipeline's caller). */
  readonly onRetry: (error: unknown) => void;
}

/**
 * Subscribes to a failed poll source again `delayMs` later (its next poll), for as long as its
 * failures are transient; a fatal one (`isFatal`: refused token, unknown code, bad options) goes
 * through as the stream's error. Placed before a stateful operator, so that operator's state
 * survives the retry.
 *
 * Each outage (the failures since the source last gave a value) is one run of core's
 * `retryWithBudget`, the one retry loop, which ends when the source gives a value again. Its
 * budget is unbounded by design: the client has already retried each request with backoff (its
 * own budget), a live poll's job is to keep a dataset current once the service is back (a
 * provider's maintenance can last hours, and ending the pipeline would cost a restart's
 * backfill), and every failed poll is reported through `onRetry`.
 */
export function retryTransient<T>(options: RetryTransientOptions): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const stop = new AbortController();
      let inner: Subscription | undefined;
      // Follows the source: settles at its first value or its end, rejects on an error before a
      // value; an error after a value starts a new outage.
      const follow = (): Promise<void> =>
        new Promise<void>((resolve, reject) => {
          let gave = false;
          const subscription = source.subscribe({
            next: (value) => {
              if (!gave) resolve();
              gave = true;
              subscriber.next(value);
            },
            error: (err: unknown) => (gave ? outage(err) : reject(err)),
            complete: () => {
              resolve();
              subscriber.complete();
            },
          });
          inner = subscription;
          // Unsubscribed while the source still ran its subscribe (a value taken at once): that
          // teardown found no subscription to end, so it ends here.
          if (stop.signal.aborted) subscription.unsubscribe();
        });
      const outage = (failure: unknown): void => {
        // Attempt 1 is the failure that opened the outage; each later one is the next poll.
        const attempt = (n: number): Promise<void> => (n === 1 ? Promise.reject(failure) : follow());
        retryWithBudget(attempt, {
          budgetMs: Number.POSITIVE_INFINITY,
          baseDelayMs: options.delayMs,
          maxDelayMs: options.delayMs,
          jitter: 'none',
          clock: options.clock,
          signal: stop.signal,
          retryable: (err) => !isFatal(err),
          onRetry: (err) => options.onRetry(err),
        }).catch((err: unknown) => {
          if (!stop.signal.aborted) subscriber.error(err);
        });
      };
      follow().catch(outage);
      return () => {
        stop.abort();
        inner?.unsubscribe();
      };
    });
}
