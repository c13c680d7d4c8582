import { Observable } from 'rxjs';

/**
 * Emits once and completes when `signal` aborts (at once if it already has): the notifier of a
 * `takeUntil` that turns a pipeline's stop into the completion of its source.
 */
export function fromAbortSignal(signal: AbortSignal): Observable<void> {
  return new Observable<void>((subscriber) => {
    const onAbort = (): void => {
      subscriber.next();
      subscriber.complete();
    };
    if (signal.aborted) {
      onAbort();
      return undefined;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  });
}
