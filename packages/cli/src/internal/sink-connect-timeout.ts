import { envSecondsMs } from './env-seconds.js';

/** Seconds a command waits for Redis or a Kafka broker at start, unless `QUOTEFLOW_CONNECT_TIMEOUT_S` says otherwise. */
export const DEFAULT_CONNECT_TIMEOUT_S = 30;

/**
 * How long a command waits for Redis or a Kafka broker at start: 30 s (`QUOTEFLOW_CONNECT_TIMEOUT_S`)
 * or the command's `--duration`, whichever is longer (contract.md: a sink that cannot be reached
 * fails the command within that time).
 */
export function sinkConnectTimeoutMs(
  durationS: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number {
  return Math.max(
    envSecondsMs(env, 'QUOTEFLOW_CONNECT_TIMEOUT_S', DEFAULT_CONNECT_TIMEOUT_S),
    (durationS ?? 0) * 1000,
  );
}
