/** Whether `signal` is aborted (a function, so flow narrowing does not freeze an earlier check). */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
