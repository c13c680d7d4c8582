import { retry, throwError, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { isFatal } from './error-kinds.js';

/** Options of {@link retryTransient}. */
export interface RetryTransientOptions {
  /** Wait before subscribing to the source again, on `scheduler`'s time. */
  readonly delayMs: number;
  readonly scheduler: SchedulerLike;
  /** Told of every transient failure before the wait (a warning for the pipeline's caller). */
  readonly onRetry: (error: unknown) => void;
}

/**
 * Subscribes to a failed poll source again `delayMs` later (its next poll), for as long as its
 * failures are transient; a fatal one (`isFatal`: refused token, unknown code, bad options) goes
 * through as the stream's error. Placed before a stateful operator, so that operator's state
 * survives the retry.
 */
export function retryTransient<T>(options: RetryTransientOptions): MonoTypeOperatorFunction<T> {
  return retry<T>({
    delay: (error: unknown) => {
      if (isFatal(error)) return throwError(() => error);
      options.onRetry(error);
      return timer(options.delayMs, options.scheduler);
    },
  });
}
