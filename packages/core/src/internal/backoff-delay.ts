/**
 * Exponential backoff with full jitter: a random delay in [0, min(maxMs, baseMs * 2^(attempt-1))).
 * `attempt` counts from 1 (the delay before the second request).
 */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
