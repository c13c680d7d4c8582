/** Wall-clock ↔ instant conversion for IANA time zones, with the zone offset cached per hour. */

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, number>();
const HOUR_MS = 3_600_000;

function formatter(timeZone: string): Intl.DateTimeFormat {
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

/** Offset of `timeZone` from UTC at instant `ms`, in ms (positive east of Greenwich). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0;
  const key = `${timeZone}@${Math.floor(ms / HOUR_MS)}`;
  const cached = offsetCache.get(key);
  if (cached !== undefined) return cached;
  const parts = formatter(timeZone).formatToParts(new Date(Math.floor(ms / HOUR_MS) * HOUR_MS));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  const offset = asUtc - Math.floor(ms / HOUR_MS) * HOUR_MS;
  if (offsetCache.size > 10_000) offsetCache.clear();
  offsetCache.set(key, offset);
  return offset;
}

/** The instant of a wall-clock time in `timeZone` (month 1-12). */
export function zonedToUtcMs(
  timeZone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  const naive = Date.UTC(year, month - 1, day, hour, minute, second);
  // Two passes settle the offset around DST changes.
  let utc = naive - zoneOffsetMs(naive, timeZone);
  utc = naive - zoneOffsetMs(utc, timeZone);
  return utc;
}

/** The wall-clock fields of instant `ms` in `timeZone` (month 1-12, weekday 0 = Sunday). */
export function utcToZoned(ms: number, timeZone: string) {
  const d = new Date(ms + zoneOffsetMs(ms, timeZone));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay(),
    /** Milliseconds since local midnight. */
    msOfDay:
      d.getUTCHours() * HOUR_MS +
      d.getUTCMinutes() * 60_000 +
      d.getUTCSeconds() * 1000 +
      d.getUTCMilliseconds(),
  };
}

/**
 * Parses an exchange wall-clock string `yyyy-MM-dd HH:mm:ss` (or `yyyy-MM-dd`, or with a `T`)
 * in `timeZone` to epoch ms; `undefined` when the string is not of that form.
 */
export function parseWallClock(text: string, timeZone: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text.trim());
  if (m === null) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    return undefined;
  }
  return zonedToUtcMs(timeZone, Number(y), month, day, Number(h), Number(mi), Number(s));
}
