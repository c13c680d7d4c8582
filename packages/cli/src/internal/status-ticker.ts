import type { Logger } from 'pino';
import { envSecondsMs } from './env-seconds.js';

/** Seconds between status lines unless `QUOTEFLOW_STATUS_INTERVAL_S` says otherwise. */
const DEFAULT_STATUS_INTERVAL_S = 30;

/** `QUOTEFLOW_STATUS_INTERVAL_S` in ms (a usage error names the variable when it is not a positive number). */
export function statusIntervalMs(env: Readonly<Record<string, string | undefined>>): number {
  return envSecondsMs(env, 'QUOTEFLOW_STATUS_INTERVAL_S', DEFAULT_STATUS_INTERVAL_S);
}

/**
 * One `status` line every `intervalMs` while a long command runs, so a log file or a pipe shows
 * the command is alive and how far it got even when info lines are off by default.
 */
export class StatusTicker {
  /** Monotonic, so a wall clock stepped meanwhile does not skew `elapsedS`. */
  readonly #startedMs = performance.now();
  readonly #timer: NodeJS.Timeout;

  constructor(logger: Logger, intervalMs: number, describe: () => Record<string, unknown>) {
    this.#timer = setInterval(() => {
      logger.info(
        { elapsedS: Math.round((performance.now() - this.#startedMs) / 1000), ...describe() },
        'status',
      );
    }, intervalMs);
    // The command's own work keeps the process alive, never the status line.
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
