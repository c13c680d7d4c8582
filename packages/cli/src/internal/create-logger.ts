import { pino, type Logger } from 'pino';
import type { StderrChannel } from './stderr-channel.js';

/** Log levels a user may pick through `QUOTEFLOW_LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as a short line for people: `12:00:01 INFO message key=value`. */
export function humanLine(json: string): string {
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
  const name = typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : String(level);
  return `${clock} ${name.padEnd(5)} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`;
}

/**
 * The CLI's logger: pino writing to stderr only, through the redacting channel. Without a terminal
 * every line is one JSON object (structured, for log collectors); on a terminal a short human line.
 */
export function createLogger(channel: StderrChannel, level: string): Logger {
  const pretty = channel.isTTY;
  return pino(
    { level, base: null, timestamp: pino.stdTimeFunctions.isoTime },
    { write: (line: string) => channel.write(pretty ? humanLine(line) : line) },
  );
}
