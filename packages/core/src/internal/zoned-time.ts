/**
 * Wall-clock ↔ instant conversion for IANA time zones through Temporal (`temporal-polyfill`, the
 * TC39 API), so daylight saving time comes from the zone database, never from offset arithmetic.
 */
import { Temporal } from 'temporal-polyfill';

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Every zone changes its offset on a quarter hour, so a wall clock advances with elapsed time inside one. */
const QUARTER_MS = 15 * MINUTE_MS;

/** Wall-clock fields of an instant (month 1-12, weekday 0 = Sunday). */
export interface ZonedFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly weekday: number;
  /** Milliseconds since local midnight. */
  readonly msOfDay: number;
}

interface QuarterStart {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly weekday: number;
  readonly msOfDay: number;
}
/** Temporal results per zone and quarter hour (keyed by the quarter's start, epoch ms). */
const quarterCache = new Map<string, Map<number, QuarterStart>>();
/** Instants of wall-clock times, keyed by zone and fields (what {@link zonedToUtcMs} was given). */
const instantCache = new Map<string, number>();

/** The wall-clock fields of instant `ms` in `timeZone`. */
export function utcToZoned(ms: number, timeZone: string): ZonedFields {
  const quarterStart = Math.floor(ms / QUARTER_MS) * QUARTER_MS;
  let byQuarter = quarterCache.get(timeZone);
  if (byQuarter === undefined) {
    byQuarter = new Map();
    quarterCache.set(timeZone, byQuarter);
  }
  let q = byQuarter.get(quarterStart);
  if (q === undefined) {
    const z = Temporal.Instant.fromEpochMilliseconds(quarterStart).toZonedDateTimeISO(timeZone);
    q = {
      year: z.year,
      month: z.month,
      day: z.day,
      weekday: z.dayOfWeek % 7,
      msOfDay: z.hour * HOUR_MS + z.minute * MINUTE_MS + z.second * 1000,
    };
    if (byQuarter.size > 20_000) byQuarter.clear();
    byQuarter.set(quarterStart, q);
  }
  const msOfDay = q.msOfDay + (ms - quarterStart);
  return {
    year: q.year,
    month: q.month,
    day: q.day,
    weekday: q.weekday,
    hour: Math.floor(msOfDay / HOUR_MS),
    minute: Math.floor(msOfDay / MINUTE_MS) % 60,
    second: Math.floor(msOfDay / 1000) % 60,
    msOfDay,
  };
}

/**
 * The instant of a wall-clock time in `timeZone` (month 1-12). Days past the month's end roll over
 * into the next month (`day + 1` is the next day). A time that a daylight-saving change skips or
 * repeats resolves as Temporal's `'compatible'` disambiguation does (later for a gap, earlier for
 * a repeat).
 */
export function zonedToUtcMs(
  timeZone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  // Calendars ask for the same few instants (a session's open, a day's start) at every poll of
  // every series, and a Temporal conversion costs tens of microseconds: remember each answer.
  const key = `${timeZone} ${year} ${month} ${day} ${hour} ${minute} ${second}`;
  let ms = instantCache.get(key);
  if (ms === undefined) {
    const date = Temporal.PlainDate.from({ year, month, day: 1 }).add({ days: day - 1 });
    ms = date.toZonedDateTime({ timeZone, plainTime: { hour, minute, second } }).epochMilliseconds;
    if (instantCache.size > 20_000) instantCache.clear();
    instantCache.set(key, ms);
  }
  return ms;
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
