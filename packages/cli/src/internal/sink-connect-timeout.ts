/**
 * How long a command waits for Redis or a Kafka broker at start: 30 s or the command's
 * `--duration`, whichever is longer (contract.md: a sink that cannot be reached fails the command
 * within that time).
 */
export function sinkConnectTimeoutMs(durationS: number | undefined): number {
  return Math.max(30_000, (durationS ?? 0) * 1000);
}
