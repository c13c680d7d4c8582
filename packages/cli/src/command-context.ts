import type { Logger } from 'pino';
import type { Redactor } from './internal/redactor.js';
import type { StderrChannel } from './internal/stderr-channel.js';
import type { StopWaits } from './internal/stop-waits.js';

/** The process surroundings a CLI run gets: streams, environment, working directory, stop signal. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Whether stdout is a terminal (tables for people vs data for programs). */
  readonly stdoutIsTTY?: boolean;
  /** Whether stderr is a terminal (progress bars and human log lines vs structured lines). */
  readonly stderrIsTTY?: boolean;
  /** Aborted on SIGINT/SIGTERM: long commands stop polling, flush, write state and return. */
  readonly signal?: AbortSignal;
  /** Where commands note what a stop still waits for (the process's shutdown cut-off names it). */
  readonly stopWaits?: StopWaits;
}

/** What every command action gets: the only ways to write output, the logger and the stop signal. */
export interface CommandContext {
  readonly io: CliIo;
  readonly redactor: Redactor;
  readonly stderr: StderrChannel;
  readonly logger: Logger;
  /** The periodic one-line status of long commands (shown by default also without a terminal). */
  readonly status: Logger;
  readonly signal: AbortSignal;
  readonly stopWaits: StopWaits;
  /** Writes result text to stdout (redacted). Results only: logs and progress go to stderr. */
  out(text: string): void;
  /**
   * Whether progress bars may be drawn: stderr is a terminal, logs are pretty text and info lines
   * are on (not with `-q`, nor with `--log-format json`, whose lines a bar would break).
   */
  progressBars(): boolean;
}
