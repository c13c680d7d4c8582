import type { Observable, Subscription } from 'rxjs';
import { BufferOverflowError, InvalidOptionError } from '../errors.js';

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
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const buffer: T[] = [];
      let head = 0;
      let done = false;
      let failure: { error: unknown } | undefined;
      let waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
      let subscription: Subscription | undefined;

      const settle = () => {
        if (waiting === undefined) return;
        const w = waiting;
        if (head < buffer.length) {
          waiting = undefined;
          w.resolve({ value: take(), done: false });
        } else if (failure !== undefined) {
          waiting = undefined;
          w.reject(failure.error);
        } else if (done) {
          waiting = undefined;
          w.resolve({ value: undefined, done: true });
        }
      };
      const take = (): T => {
        const value = buffer[head] as T;
        buffer[head] = undefined as T; // release the reference
        head++;
        if (head > 1024 && head * 2 > buffer.length) {
          buffer.splice(0, head);
          head = 0;
        }
        return value;
      };
      const stop = () => {
        done = true;
        subscription?.unsubscribe();
      };
      const start = () => {
        if (subscription !== undefined || done) return;
        subscription = source$.subscribe({
          next: (value) => {
            if (done) return;
            if (buffer.length - head >= maxBuffered) {
              failure = { error: new BufferOverflowError(maxBuffered) };
              stop();
            } else buffer.push(value);
            settle();
          },
          error: (error: unknown) => {
            failure = { error };
            done = true;
            settle();
          },
          complete: () => {
            done = true;
            settle();
          },
        });
        if (done) subscription.unsubscribe();
      };

      return {
        next: () => {
          start();
          if (head < buffer.length) return Promise.resolve({ value: take(), done: false });
          if (failure !== undefined) {
            const { error } = failure;
            failure = undefined;
            buffer.length = head = 0;
            return Promise.reject(error);
          }
          if (done) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve, reject) => {
            waiting = { resolve, reject };
          });
        },
        return: () => {
          stop();
          buffer.length = head = 0;
          failure = undefined;
          const w = waiting;
          waiting = undefined;
          w?.resolve({ value: undefined, done: true });
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
