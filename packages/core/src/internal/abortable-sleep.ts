/** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether `signal` is aborted (a function, so flow narrowing does not freeze an earlier check). */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
