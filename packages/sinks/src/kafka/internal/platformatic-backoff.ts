/**
 * Exponential back-off between @platformatic/kafka's retries: `firstMs` doubling up to `maxMs`.
 * Transactional producers start at 20 ms, as the Java client does for AddPartitionsToTxn: the first
 * request of a transaction meets CONCURRENT_TRANSACTIONS while the broker still writes the previous
 * commit's markers (a few ms), and 100 ms there would stall every checkpoint.
 */
export const platformaticBackoff =
  (maxMs: number, firstMs = 100) =>
  (_client: unknown, _op: string, attempt: number): number =>
    Math.min(maxMs, firstMs * 2 ** Math.min(attempt - 1, 16));
