import { Observable } from 'rxjs';

/**
 * A cold observable of one promise-returning call: the call starts on subscribe, its value is
 * emitted and the observable completes; unsubscribing aborts the call through its signal.
 * A synchronous thenable settles synchronously, which lets virtual-time tests drive sources.
 */
export function fromAbortable<T>(call: (signal: AbortSignal) => PromiseLike<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    let pending: PromiseLike<T>;
    try {
      pending = call(controller.signal);
    } catch (err) {
      subscriber.error(err);
      return undefined;
    }
    pending.then(
      (value) => {
        settled = true;
        subscriber.next(value);
        subscriber.complete();
      },
      (err: unknown) => {
        settled = true;
        subscriber.error(err);
      },
    );
    return () => {
      if (!settled) controller.abort();
    };
  });
}
