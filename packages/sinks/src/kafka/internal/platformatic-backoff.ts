/** Exponential back-off between @platformatic/kafka's retries: 100 ms doubling up to `maxMs`. */
export const platformaticBackoff =
  (maxMs: number) =>
  (_client: unknown, _op: string, attempt: number): number =>
    Math.min(maxMs, 100 * 2 ** Math.min(attempt - 1, 16));
