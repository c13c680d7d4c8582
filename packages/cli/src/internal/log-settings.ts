import { UsageError } from './usage-error.js';

/** Log formats of `--log-format` (contract.md: pretty on a terminal, json otherwise). */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Log levels a user may pick through `QUOTEFLOW_LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The log flags every command takes. */
export interface LogFlags {
  readonly logFormat?: string | undefined;
  readonly quiet?: boolean | undefined;
  readonly verbose?: boolean | undefined;
}

/** How the CLI logs for one run. */
export interface LogSettings {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /**
   * Level of the periodic one-line status of long commands: `info` when the user did not ask for
   * quiet, so the status still shows when quiet is only the default of a non-terminal.
   */
  readonly statusLevel: LogLevel;
  /** ANSI colours in pretty lines: only on a terminal, never with `NO_COLOR` set. */
  readonly color: boolean;
}

const RANK: Record<LogLevel, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: 99,
};

/**
 * Resolves the log flags, the environment and the terminal into settings. Precedence: `-v`/`-q`,
 * then `QUOTEFLOW_LOG_LEVEL`, then the default: `info` on a terminal, `warn` (quiet, plus the
 * periodic status) when stderr goes to a file or pipe, where every info line would be noise.
 */
export function resolveLogSettings(
  flags: LogFlags,
  env: Readonly<Record<string, string | undefined>>,
  stderrIsTTY: boolean,
): LogSettings {
  const formatRaw = flags.logFormat ?? nonEmpty(env['QUOTEFLOW_LOG_FORMAT']);
  if (formatRaw !== undefined && !(LOG_FORMATS as readonly string[]).includes(formatRaw)) {
    const source = flags.logFormat === undefined ? 'QUOTEFLOW_LOG_FORMAT' : '--log-format';
    throw new UsageError(
      `${source} must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(formatRaw)}`,
    );
  }
  const format = (formatRaw as LogFormat | undefined) ?? (stderrIsTTY ? 'pretty' : 'json');
  const envLevel = nonEmpty(env['QUOTEFLOW_LOG_LEVEL']);
  if (envLevel !== undefined && !(LOG_LEVELS as readonly string[]).includes(envLevel)) {
    throw new UsageError(
      `QUOTEFLOW_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(envLevel)}`,
    );
  }
  if (flags.quiet === true && flags.verbose === true)
    throw new UsageError('--quiet and --verbose exclude each other');
  const explicit: LogLevel | undefined =
    flags.verbose === true ? 'debug' : flags.quiet === true ? 'warn' : (envLevel as LogLevel | undefined);
  const level = explicit ?? (stderrIsTTY ? 'info' : 'warn');
  const statusLevel =
    explicit !== undefined && RANK[explicit] > RANK.info
      ? explicit
      : RANK[level] < RANK.info
        ? level
        : 'info';
  const noColor = nonEmpty(env['NO_COLOR']) !== undefined;
  return { format, level, statusLevel, color: format === 'pretty' && stderrIsTTY && !noColor };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
