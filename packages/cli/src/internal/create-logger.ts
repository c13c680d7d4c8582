import { pino, type Logger } from 'pino';
import type { LogSettings } from './log-settings.js';
import { RepeatedWarnings } from './repeated-warnings.js';
import type { StderrChannel } from './stderr-channel.js';

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

const WARN = 40;

/** SGR colour per level for pretty lines on a terminal (NO_COLOR turns them off). */
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '36', 40: '33', 50: '31', 60: '31' };

/** One pino JSON line as a short line for people: `12:00:01 INFO message key=value`. */
export function humanLine(json: string, color = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { level, time, msg, ...rest } = record;
  const clock = typeof time === 'string' ? time.slice(11, 19) : new Date().toISOString().slice(11, 19);
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  let name = (typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : String(level)).padEnd(5);
  const sgr = typeof level === 'number' ? LEVEL_COLORS[level] : undefined;
  if (color && sgr !== undefined) name = `\u001b[${sgr}m${name}\u001b[39m`;
  return `${clock} ${name} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`;
}

/** The CLI's loggers and the switch that applies the log flags once commander has parsed them. */
export interface CliLogging {
  /** Everything the CLI and the libraries log. */
  readonly logger: Logger;
  /** The periodic one-line status of long commands: shown unless the user asked for quiet. */
  readonly status: Logger;
  /** Applies `--log-format`, `-q`, `-v` (called before the command's action runs). */
  apply(settings: LogSettings): void;
  /** The settings in force. */
  settings(): LogSettings;
}

/**
 * The CLI's logger: pino writing to stderr only, through the redacting channel, as one JSON
 * object per line (`json`, for log collectors) or a short human line (`pretty`).
 */
export function createLogging(channel: StderrChannel, initial: LogSettings): CliLogging {
  let settings = initial;
  const repeats = new RepeatedWarnings();
  const logger: Logger = pino(
    {
      level: settings.level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: {
        logMethod(args, method, level) {
          const [fields, msg] = args as unknown[];
          if (level === WARN && repeats.isRepeat(msg, fields)) {
            logger.debug(...(args as [object, string]));
            return;
          }
          method.apply(this, args);
        },
      },
    },
    {
      write: (line: string) =>
        channel.write(settings.format === 'pretty' ? humanLine(line, settings.color) : line),
    },
  );
  const status = logger.child({}, { level: settings.statusLevel });
  return {
    logger,
    status,
    apply: (next) => {
      settings = next;
      logger.level = next.level;
      status.level = next.statusLevel;
    },
    settings: () => settings,
  };
}
