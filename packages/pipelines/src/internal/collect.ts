import { toArray, type Observable } from 'rxjs';

/**
 * Every value of a finite, cold observable as an array; unsubscribes (aborting a request in flight)
 * when `signal` aborts, and then rejects with the signal's reason.
 */
export function collect<T>(source: Observable<T>, signal: AbortSignal): Promise<T[]> {
  return new Promise<T[]>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      sub.unsubscribe();
      reject(signal.reason);
    };
    const sub = source.pipe(toArray()).subscribe({
      next: (values) => resolve(values),
      error: (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
      complete: () => signal.removeEventListener('abort', onAbort),
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
