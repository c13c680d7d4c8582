import type { Clock } from '@quoteflow/core';

/** Waits `ms` on `clock`, or less if `signal` aborts (then resolves, never rejects: the caller checks the signal). */
export function delayOn(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
