import { parseWallClock } from './internal/zoned-time.js';

/**
 * The instant (epoch ms UTC) a suspension record's halt or resume fields describe, read as
 * wall-clock time in `timeZone` (the exchange's; provider-facts.md): the date-time field if it
 * parses, else the time field when it carries a full date-time itself, else the date field plus
 * the time field, else the date alone. `undefined` when none of them parses.
 *
 * @example
 * suspensionInstant(undefined, '2026-03-02', '09:30:00', 'America/New_York'); // 1772461800000
 */
export function suspensionInstant(
  dateTime: string | undefined,
  date: string | undefined,
  time: string | undefined,
  timeZone: string,
): number | undefined {
  if (dateTime !== undefined) {
    const ms = parseWallClock(dateTime, timeZone);
    if (ms !== undefined) return ms;
  }
  if (time !== undefined) {
    const full = parseWallClock(time, timeZone);
    if (full !== undefined) return full;
    if (date !== undefined) {
      const ms = parseWallClock(`${date.trim().slice(0, 10)} ${time.trim()}`, timeZone);
      if (ms !== undefined) return ms;
    }
  }
  return date === undefined ? undefined : parseWallClock(date, timeZone);
}
