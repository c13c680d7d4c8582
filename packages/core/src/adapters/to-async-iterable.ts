import type { Observable } from 'rxjs';
import { InvalidOptionError } from '../errors.js';
import { ObservableIterator } from '../internal/observable-iterator.js';

/** Options of {@link toAsyncIterable}. */
export interface ToAsyncIterableOptions {
  /**
   * Values held for a consumer that reads slower than the source emits. An Observable cannot be
   * paused, so past this the iteration fails with `QF_BUFFER_OVERFLOW` instead of growing memory
   * without bound. Default {@link TO_ASYNC_ITERABLE_DEFAULTS}.
   */
  readonly maxBuffered?: number;
}

/** Defaults of {@link ToAsyncIterableOptions}. */
export const TO_ASYNC_ITERABLE_DEFAULTS = { maxBuffered: 100_000 } as const;

/**
 * An observable as an async iterable, for `for await` without RxJS. Subscribes when iteration
 * starts (each iteration subscribes afresh); buffers values up to `maxBuffered`; ends when the
 * observable completes, throws its error; `break`/`return` unsubscribes (aborting what the
 * source has in flight).
 *
 * @example
 * for await (const tick of toAsyncIterable(pollDepth(client, { codes: ['BTCUSDT'] }))) console.log(tick.seq);
 */
export function toAsyncIterable<T>(
  source$: Observable<T>,
  options: ToAsyncIterableOptions = {},
): AsyncIterable<T> {
  const maxBuffered = options.maxBuffered ?? TO_ASYNC_ITERABLE_DEFAULTS.maxBuffered;
  if (!Number.isInteger(maxBuffered) || maxBuffered < 1) {
    throw new InvalidOptionError(
      'maxBuffered',
      `toAsyncIterable: "maxBuffered" must be a positive integer, got ${JSON.stringify(maxBuffered)}`,
    );
  }
  return { [Symbol.asyncIterator]: () => new ObservableIterator(source$, maxBuffered) };
}
