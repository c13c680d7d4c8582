import { Readable } from 'node:stream';
import type { Observable, Subscription } from 'rxjs';

/** Options of {@link toReadable}. */
export interface ToReadableOptions {
  /** Objects the stream holds before it reports backpressure; default 16 (Node's object-mode default). */
  readonly highWaterMark?: number;
}

/**
 * An observable as an object-mode Node `Readable`, for stream pipelines without RxJS. Subscribes
 * on the first read; values are pushed while the consumer keeps up and held (an Observable
 * cannot be paused) while it does not, then handed on as it reads. Completion ends the stream,
 * an error destroys it with that error, and `destroy()` unsubscribes (aborting what the source
 * has in flight).
 *
 * @example
 * pipeline(toReadable(pollLatestBars(client, { groups })), new Transform({ objectMode: true, transform: (b, _e, cb) => cb(null, JSON.stringify(b) + '\n') }), process.stdout);
 */
export function toReadable<T>(source$: Observable<T>, options: ToReadableOptions = {}): Readable {
  let subscription: Subscription | undefined;
  const held: T[] = [];
  let flowing = false;
  let ended = false;
  let eof = false;

  const drain = () => {
    while (flowing && held.length > 0) flowing = stream.push(held.shift());
    if (ended && held.length === 0 && !eof) {
      eof = true;
      stream.push(null);
    }
  };

  const stream: Readable = new Readable({
    objectMode: true,
    highWaterMark: options.highWaterMark ?? 16,
    read() {
      flowing = true;
      if (subscription === undefined) {
        subscription = source$.subscribe({
          next: (value) => {
            if (value === null || value === undefined) return; // a Readable cannot carry them
            if (flowing && held.length === 0) flowing = stream.push(value);
            else held.push(value);
          },
          error: (err: unknown) => stream.destroy(err instanceof Error ? err : new Error(String(err))),
          complete: () => {
            ended = true;
            drain();
          },
        });
      }
      drain();
    },
    destroy(err, callback) {
      subscription?.unsubscribe();
      held.length = 0;
      callback(err);
    },
  });
  return stream;
}
