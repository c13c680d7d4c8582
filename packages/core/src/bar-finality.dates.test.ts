import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { barFinalAfterMs, dateCalendarMisses, tradingDateOf } from './bar-finality.js';
import { EXCHANGE_CALENDARS } from './calendar/trading-calendar.js';
import { zonedToUtcMs } from './internal/zoned-time.js';
import { calendarOf, type TradingCalendar } from './markets.js';
import {
  addLocalDays,
  formatLocalDate,
  sessionOn,
  weekdayOfDate,
  type LocalDate,
} from './trading-sessions.js';

// The date of a daily bar and when it is final, under every labelling the provider facts list
// (midnight UTC of its date, exchange-local midnight, the session's open, any instant of the
// session), at every exchange and around the clock (issue 33 item 3). Each exchange's rows run with
// the process in that exchange's own time zone, so nothing may lean on the machine's zone.

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const savedTz = process.env['TZ'];
afterEach(() => {
  if (savedTz === undefined) delete process.env['TZ'];
  else process.env['TZ'] = savedTz;
});

/** One trading date of one exchange and the labels each labelling gives its daily bar. */
interface DailyCase {
  readonly code: string;
  readonly date: string;
  readonly labels: Readonly<Record<'utc-midnight' | 'local-midnight' | 'open' | 'in-session', string>>;
  /** The session's close (UTC), which finalises the bar. */
  readonly closeIso: string;
}

const SESSION_DAYS: readonly DailyCase[] = [
  {
    // The provider's own sample: 15:40 Hong Kong on Friday 3 March 2023 (the Saturday).
    code: '700.HK',
    date: '2023-03-03',
    labels: {
      'utc-midnight': '2023-03-03T00:00:00Z', // 08:00 Hong Kong
      'local-midnight': '2023-03-02T16:00:00Z',
      open: '2023-03-03T01:30:00Z',
      'in-session': '2023-03-03T07:40:00Z',
    },
    closeIso: '2023-03-03T08:00:00Z',
  },
  {
    // A Hong Kong half day (Christmas Eve 2025: the morning only, to 12:00).
    code: '857.HK',
    date: '2025-12-24',
    labels: {
      'utc-midnight': '2025-12-24T00:00:00Z',
      'local-midnight': '2025-12-23T16:00:00Z',
      open: '2025-12-24T01:30:00Z',
      'in-session': '2025-12-24T03:40:00Z', // 11:40
    },
    closeIso: '2025-12-24T04:00:00Z',
  },
  {
    // New York on daylight time (from 8 March 2026), a Friday.
    code: 'AAPL.US',
    date: '2026-03-13',
    labels: {
      'utc-midnight': '2026-03-13T00:00:00Z', // 20:00 New York on Thursday
      'local-midnight': '2026-03-13T04:00:00Z',
      open: '2026-03-13T13:30:00Z',
      'in-session': '2026-03-13T19:40:00Z', // 15:40
    },
    closeIso: '2026-03-13T20:00:00Z',
  },
  {
    // A New York half day on standard time (the day after Thanksgiving 2025, to 13:00).
    code: 'GOOGL.US',
    date: '2025-11-28',
    labels: {
      'utc-midnight': '2025-11-28T00:00:00Z', // 19:00 New York on Thanksgiving
      'local-midnight': '2025-11-28T05:00:00Z',
      open: '2025-11-28T14:30:00Z',
      'in-session': '2025-11-28T17:40:00Z', // 12:40
    },
    closeIso: '2025-11-28T18:00:00Z',
  },
  {
    // The Monday after daylight time ends in New York (1 November 2026).
    code: 'UNH.US',
    date: '2026-11-02',
    labels: {
      'utc-midnight': '2026-11-02T00:00:00Z',
      'local-midnight': '2026-11-02T05:00:00Z',
      open: '2026-11-02T14:30:00Z',
      'in-session': '2026-11-02T20:59:00Z', // 15:59
    },
    closeIso: '2026-11-02T21:00:00Z',
  },
  {
    code: '600416.SH',
    date: '2026-03-13',
    labels: {
      'utc-midnight': '2026-03-13T00:00:00Z',
      'local-midnight': '2026-03-12T16:00:00Z',
      open: '2026-03-13T01:30:00Z',
      'in-session': '2026-03-13T06:40:00Z', // 14:40 Shanghai
    },
    closeIso: '2026-03-13T07:00:00Z',
  },
  {
    // Shenzhen, in its lunch break (inside the day's session, between its segments).
    code: '000627.SZ',
    date: '2023-03-03',
    labels: {
      'utc-midnight': '2023-03-03T00:00:00Z',
      'local-midnight': '2023-03-02T16:00:00Z',
      open: '2023-03-03T01:30:00Z',
      'in-session': '2023-03-03T04:15:00Z', // 12:15 Shanghai
    },
    closeIso: '2023-03-03T07:00:00Z',
  },
];

/** Days the calendar calls holidays on which the service's bars say the exchange traded. */
const HOLIDAYS: readonly DailyCase[] = [
  {
    code: 'AAPL.US', // Thanksgiving 2026
    date: '2026-11-26',
    labels: {
      'utc-midnight': '2026-11-26T00:00:00Z',
      'local-midnight': '2026-11-26T05:00:00Z',
      open: '2026-11-26T14:30:00Z',
      'in-session': '2026-11-26T20:40:00Z',
    },
    closeIso: '2026-11-27T05:00:00Z', // the end of that New York day
  },
  {
    code: '700.HK', // New Year's Day 2026
    date: '2026-01-01',
    labels: {
      'utc-midnight': '2026-01-01T00:00:00Z',
      'local-midnight': '2025-12-31T16:00:00Z',
      open: '2026-01-01T01:30:00Z',
      'in-session': '2026-01-01T07:40:00Z',
    },
    closeIso: '2026-01-01T16:00:00Z', // the end of that Hong Kong day
  },
  {
    code: '600416.SH', // National Day 2026
    date: '2026-10-01',
    labels: {
      'utc-midnight': '2026-10-01T00:00:00Z',
      'local-midnight': '2026-09-30T16:00:00Z',
      open: '2026-10-01T01:30:00Z',
      'in-session': '2026-10-01T06:40:00Z',
    },
    closeIso: '2026-10-01T16:00:00Z',
  },
];

describe('the date of a daily bar, under every labelling, in each exchange’s own time zone', () => {
  it.each(SESSION_DAYS)('$code on $date: every label names that date and closes with its session', (c) => {
    const cal = calendarOf(c.code);
    process.env['TZ'] = cal.timeZone;
    for (const [labelling, label] of Object.entries(c.labels)) {
      const where = `${c.code} ${labelling} ${label}`;
      expect(tradingDateOf(t(label), cal), where).toBe(c.date);
      expect(dateCalendarMisses(t(label), 8, cal), where).toBeUndefined();
      expect(iso(barFinalAfterMs(t(label), 8, cal)), where).toBe(iso(t(c.closeIso)));
    }
  });

  it.each(HOLIDAYS)(
    '$code on $date, a calendar holiday the service traded: every label keeps that date, final by the end of the local day',
    (c) => {
      const cal = calendarOf(c.code);
      process.env['TZ'] = cal.timeZone;
      for (const [labelling, label] of Object.entries(c.labels)) {
        const where = `${c.code} ${labelling} ${label}`;
        expect(tradingDateOf(t(label), cal), where).toBe(c.date);
        expect(dateCalendarMisses(t(label), 8, cal), where).toBe(c.date);
        expect(iso(barFinalAfterMs(t(label), 8, cal)), where).toBe(iso(t(c.closeIso)));
      }
    },
  );

  it('a label after the close keeps its date (the service traded later than the calendar says)', () => {
    const hk = calendarOf('700.HK');
    process.env['TZ'] = hk.timeZone;
    // 17:00 Hong Kong on Friday 3 March 2023.
    expect(tradingDateOf(t('2023-03-03T09:00:00Z'), hk)).toBe('2023-03-03');
    expect(dateCalendarMisses(t('2023-03-03T09:00:00Z'), 8, hk)).toBe('2023-03-03');
    expect(iso(barFinalAfterMs(t('2023-03-03T09:00:00Z'), 8, hk))).toBe('2023-03-03T16:00:00.000Z');
  });

  it.each(['BTCUSDT', 'EURGBP', 'GOLD'])('%s around the clock: the UTC date of the label', (code) => {
    const cal = calendarOf(code);
    process.env['TZ'] = 'America/New_York';
    for (const label of ['2023-03-03T00:00:00Z', '2023-03-03T07:40:00Z', '2023-03-03T23:59:00Z'])
      expect(tradingDateOf(t(label), cal), label).toBe('2023-03-03');
    expect(dateCalendarMisses(t('2023-03-03T07:40:00Z'), 8, cal)).toBeUndefined();
    expect(iso(barFinalAfterMs(t('2023-03-03T00:00:00Z'), 8, cal))).toBe('2023-03-04T00:00:00.000Z');
  });
});

// Property: the oracle is built from the calendar's sessions alone (sessionOn of a chosen local date,
// the regular hours for a weekday without one) and plain date arithmetic, not from the rule under test.

const FIRST_DAY: LocalDate = [2013, 1, 2];
const DAYS = Math.floor((Date.UTC(2026, 11, 31) - Date.UTC(2013, 0, 2)) / 86_400_000);
const LABELLINGS = ['utc-midnight', 'local-midnight', 'open', 'in-session'] as const;
const STOCK_CALENDARS: readonly TradingCalendar[] = Object.values(EXCHANGE_CALENDARS);

/** The daily label of local date `date` under `labelling`; `at` (0..1) places an in-session label. */
function labelOf(
  cal: TradingCalendar,
  date: LocalDate,
  labelling: (typeof LABELLINGS)[number],
  at: number,
): number {
  const [y, m, d] = date;
  const session = sessionOn(cal, date);
  const regularOpen = zonedToUtcMs(cal.timeZone, y, m, d) + cal.segments[0]![0];
  const regularClose = zonedToUtcMs(cal.timeZone, y, m, d) + cal.segments.at(-1)![1];
  const [open, close] =
    session === undefined ? [regularOpen, regularClose] : [session.openMs, session.closeMs];
  if (labelling === 'utc-midnight') return Date.UTC(y, m - 1, d);
  if (labelling === 'local-midnight') return zonedToUtcMs(cal.timeZone, y, m, d);
  if (labelling === 'open') return open;
  return open + Math.floor(at * (close - open));
}

describe('the date of a daily bar: property over every exchange, date and labelling', () => {
  it('names the session’s date and its close, or (no session: the service traded) the date and the end of that day', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STOCK_CALENDARS),
        fc.integer({ min: 0, max: DAYS }),
        fc.constantFrom(...LABELLINGS),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (cal, day, labelling, at) => {
          const date = addLocalDays(FIRST_DAY, day);
          if (!cal.weekdays.includes(weekdayOfDate(date))) return; // weekends: no bar at all
          const label = labelOf(cal, date, labelling, at);
          const session = sessionOn(cal, date);
          const want = formatLocalDate(date);
          expect(tradingDateOf(label, cal)).toBe(want);
          if (session !== undefined) {
            expect(dateCalendarMisses(label, 8, cal)).toBeUndefined();
            expect(barFinalAfterMs(label, 8, cal)).toBe(session.closeMs);
          } else {
            const [y, m, d] = addLocalDays(date, 1);
            expect(dateCalendarMisses(label, 8, cal)).toBe(want);
            expect(barFinalAfterMs(label, 8, cal)).toBe(zonedToUtcMs(cal.timeZone, y, m, d));
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
