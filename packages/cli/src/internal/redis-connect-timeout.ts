/** How long a worker waits for Redis at start: 30 s or the command's `--duration`, whichever is longer (contract.md). */
export function redisConnectTimeoutMs(durationS: number | undefined): number {
  return Math.max(30_000, (durationS ?? 0) * 1000);
}
