import { DAY_MS, weekdayOfDay } from './internal/zoned-time.js';
import { SIM_HOLIDAYS } from './sim-holidays.generated.js';

/** A calendar as this file needs it (see `SimCalendar` in calendars.ts). */
interface DayCalendar {
  readonly id: string;
  readonly segments: readonly (readonly [number, number])[];
  readonly weekdays: readonly number[];
  readonly tradesOn?: readonly string[];
}

type HolidayMarket = keyof typeof SIM_HOLIDAYS;
const HALF_DAY_US_CLOSE_MS = 13 * 3_600_000; // "markets close at 1:00pm" (the holidays package)

const lookups = new Map<HolidayMarket, { closed: ReadonlySet<string>; half: ReadonlySet<string> }>();

function lookupOf(market: HolidayMarket) {
  let l = lookups.get(market);
  if (l === undefined) {
    l = { closed: new Set(SIM_HOLIDAYS[market].closed), half: new Set(SIM_HOLIDAYS[market].halfDays) };
    lookups.set(market, l);
  }
  return l;
}

const NONE: readonly (readonly [number, number])[] = [];

/**
 * The session segments of local day `dayNumber` (days since 1970-01-01) as [start, end) ms since
 * local midnight: none on weekends and on the holidays of the `holidays` package's financial
 * calendars (generated into `sim-holidays.generated.ts`); on a half day, US sessions close at 13:00
 * and Hong Kong keeps its morning session. Past the generated years every weekday is a regular
 * session, and so is every date of `cal.tradesOn`. 24-hour calendars get their regular (empty) segments.
 */
export function segmentsOfDay(cal: DayCalendar, dayNumber: number): readonly (readonly [number, number])[] {
  if (!cal.weekdays.includes(weekdayOfDay(dayNumber))) return NONE;
  if (!(cal.id in SIM_HOLIDAYS)) return cal.segments;
  const market = cal.id as HolidayMarket;
  const date = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
  if (date > SIM_HOLIDAYS[market].lastDate || cal.tradesOn?.includes(date) === true) return cal.segments;
  const { closed, half } = lookupOf(market);
  if (closed.has(date)) return NONE;
  if (!half.has(date)) return cal.segments;
  if (market === 'hk') return cal.segments.slice(0, 1);
  return cal.segments
    .filter(([s]) => s < HALF_DAY_US_CLOSE_MS)
    .map(([s, e]) => [s, Math.min(e, HALF_DAY_US_CLOSE_MS)] as const);
}
