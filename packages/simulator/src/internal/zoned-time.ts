/** Wall-clock ↔ instant conversion for IANA zones (the simulator's own copy; it never imports core). */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();
const offsets = new Map<string, number>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** UTC offset of `timeZone` at instant `ms` (ms, east positive); zones here change offset on the hour. */
export function offsetMs(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0;
  const hour = Math.floor(ms / HOUR_MS);
  const key = `${timeZone}|${hour}`;
  const hit = offsets.get(key);
  if (hit !== undefined) return hit;
  const at = hour * HOUR_MS;
  const parts = formatterOf(timeZone).formatToParts(new Date(at));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const off = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - at;
  if (offsets.size > 50_000) offsets.clear();
  offsets.set(key, off);
  return off;
}

/** Local wall-clock fields of instant `ms`. `dayNumber` counts local days since 1970-01-01. */
export interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly weekday: number;
  readonly msOfDay: number;
  readonly dayNumber: number;
}

export function toLocal(ms: number, timeZone: string): LocalTime {
  const shifted = ms + offsetMs(ms, timeZone);
  const d = new Date(shifted);
  const dayNumber = Math.floor(shifted / DAY_MS);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: d.getUTCDay(),
    msOfDay: shifted - dayNumber * DAY_MS,
    dayNumber,
  };
}

/** The instant of local midnight + `msOfDay` on local day `dayNumber` (days since 1970-01-01). */
export function fromLocalDay(dayNumber: number, msOfDay: number, timeZone: string): number {
  const naive = dayNumber * DAY_MS + msOfDay;
  let utc = naive - offsetMs(naive, timeZone);
  utc = naive - offsetMs(utc, timeZone);
  return utc;
}

/** Weekday (0 = Sunday) of local day `dayNumber`. */
export function weekdayOfDay(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

/** Local day number of the 1st of the month containing local day `dayNumber`, and of the next month's 1st. */
export function monthBounds(dayNumber: number): [number, number] {
  const d = new Date(dayNumber * DAY_MS);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return [Date.UTC(y, m, 1) / DAY_MS, Date.UTC(y, m + 1, 1) / DAY_MS];
}

/** `yyyy-MM-dd HH:mm:ss` (or with `T` as separator) of instant `ms` in `timeZone`. */
export function formatWallClock(ms: number, timeZone: string, sep = ' '): string {
  const d = new Date(ms + offsetMs(ms, timeZone));
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}${sep}${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

export { DAY_MS, HOUR_MS };
