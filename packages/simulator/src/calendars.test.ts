import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isTradingAt,
  lastTradingMinute,
  nextTradingInstant,
  SIM_CALENDARS,
  SIM_KLINE_PERIOD_MS,
  simBarPeriodAt,
  type SimCalendar,
} from './calendars.js';
import { SIM_DEFAULT_LABELLING, SIM_LABELLINGS, type SimLabelling } from './sim-labelling.js';

const utc = (s: string) => Date.parse(s);
/** The label (ISO) of the `type` bar holding instant `at`, under the default labelling changed by `lab`. */
const labelOf = (at: string, type: number, cal: SimCalendar, lab: Partial<SimLabelling> = {}) => {
  const p = simBarPeriodAt(utc(at), type, cal, { ...SIM_DEFAULT_LABELLING, ...lab });
  return p === undefined ? undefined : new Date(p.startMs).toISOString();
};
/** Labels of every `type` bar of the local day of `at` (the instants tried are each minute of the UTC day around it). */
const dayLabels = (at: string, type: number, cal: SimCalendar, lab: Partial<SimLabelling>) => {
  const out = new Set<string>();
  for (let t = utc(at) - 12 * 3_600_000; t < utc(at) + 12 * 3_600_000; t += 60_000) {
    const p = simBarPeriodAt(t, type, cal, { ...SIM_DEFAULT_LABELLING, ...lab });
    if (p !== undefined) out.add(`${new Date(p.startMs).toISOString().slice(11, 16)}`);
  }
  return [...out];
};

describe('simBarPeriodAt', () => {
  it('aligns 24-hour intraday periods to multiples of the period since the epoch', () => {
    const t = utc('2026-11-17T13:47:12.345Z');
    expect(simBarPeriodAt(t, 1, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-17T13:47:00Z'),
      endMs: utc('2026-11-17T13:48:00Z'),
    });
    expect(simBarPeriodAt(t, 4, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-17T13:30:00Z'),
      endMs: utc('2026-11-17T14:00:00Z'),
    });
    expect(simBarPeriodAt(t, 7, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-17T12:00:00Z'),
      endMs: utc('2026-11-17T16:00:00Z'),
    });
  });

  it('starts 24-hour daily, weekly and monthly bars at UTC midnight, Monday and the 1st', () => {
    const t = utc('2026-11-19T05:00:00Z'); // a Thursday
    expect(simBarPeriodAt(t, 8, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-19T00:00:00Z'),
      endMs: utc('2026-11-20T00:00:00Z'),
    });
    expect(simBarPeriodAt(t, 9, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-16T00:00:00Z'),
      endMs: utc('2026-11-23T00:00:00Z'),
    });
    expect(simBarPeriodAt(t, 10, SIM_CALENDARS.crypto)).toMatchObject({
      startMs: utc('2026-11-01T00:00:00Z'),
      endMs: utc('2026-12-01T00:00:00Z'),
    });
  });

  it('anchors US stock intraday periods at 09:30 New York and cuts the last one at the close', () => {
    // 2026-11-17 is in EST (UTC-5): 09:30 local = 14:30Z, 16:00 local = 21:00Z.
    expect(simBarPeriodAt(utc('2026-11-17T14:31:10Z'), 5, SIM_CALENDARS.us)).toMatchObject({
      startMs: utc('2026-11-17T14:30:00Z'),
      endMs: utc('2026-11-17T15:30:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T20:45:00Z'), 5, SIM_CALENDARS.us)).toMatchObject({
      startMs: utc('2026-11-17T20:30:00Z'),
      endMs: utc('2026-11-17T21:00:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T14:29:59Z'), 1, SIM_CALENDARS.us)).toBeUndefined();
    expect(simBarPeriodAt(utc('2026-11-21T15:00:00Z'), 1, SIM_CALENDARS.us)).toBeUndefined(); // Saturday
  });

  it('follows daylight saving time: 09:30 New York is 13:30Z in July', () => {
    expect(simBarPeriodAt(utc('2026-07-14T13:40:00Z'), 3, SIM_CALENDARS.us)).toMatchObject({
      startMs: utc('2026-07-14T13:30:00Z'),
      endMs: utc('2026-07-14T13:45:00Z'),
    });
  });

  it('re-anchors Hong Kong and A-share periods at 13:00 after the lunch break', () => {
    // HK 13:00 local = 05:00Z; A-shares 11:30 close of the morning = 03:30Z.
    expect(simBarPeriodAt(utc('2026-11-17T05:10:00Z'), 5, SIM_CALENDARS.hk)).toMatchObject({
      startMs: utc('2026-11-17T05:00:00Z'),
      endMs: utc('2026-11-17T06:00:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T03:10:00Z'), 5, SIM_CALENDARS.cn)).toMatchObject({
      startMs: utc('2026-11-17T02:30:00Z'),
      endMs: utc('2026-11-17T03:30:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T04:10:00Z'), 1, SIM_CALENDARS.cn)).toBeUndefined(); // lunch
  });

  it('starts stock daily bars at local midnight and ends them with the close', () => {
    expect(simBarPeriodAt(utc('2026-11-17T15:00:00Z'), 8, SIM_CALENDARS.us)).toEqual({
      startMs: utc('2026-11-17T05:00:00Z'),
      tradesFromMs: utc('2026-11-17T14:30:00Z'),
      endMs: utc('2026-11-17T21:00:00Z'),
    });
    // Weekly: Monday local midnight to Friday's close.
    expect(simBarPeriodAt(utc('2026-11-17T02:00:00Z'), 9, SIM_CALENDARS.cn)).toMatchObject({
      startMs: utc('2026-11-15T16:00:00Z'),
      endMs: utc('2026-11-20T07:00:00Z'),
    });
    // Monthly: November 2026 ends on Monday the 30th, whose close is 07:00Z.
    expect(simBarPeriodAt(utc('2026-11-17T02:00:00Z'), 10, SIM_CALENDARS.cn)).toMatchObject({
      startMs: utc('2026-10-31T16:00:00Z'),
      endMs: utc('2026-11-30T07:00:00Z'),
    });
  });

  it('returns a period holding the instant, for every calendar, type and labelling', () => {
    const cals = Object.values(SIM_CALENDARS);
    fc.assert(
      fc.property(
        fc.integer({ min: utc('2020-01-01T00:00:00Z'), max: utc('2030-01-01T00:00:00Z') }),
        fc.constantFrom(...cals),
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom(...SIM_LABELLINGS),
        (t, cal, type, labelling) => {
          const p = simBarPeriodAt(t, type, cal, labelling);
          const trading = isTradingAt(cal, t);
          if (p === undefined) {
            // Only a stock instant outside the session (intraday), a stock date without a session
            // (daily), or a stock week without one (weekly: a holiday week such as Lunar New Year).
            expect(cal.segments.length > 0 && [1, 2, 3, 4, 5, 6, 7, 8, 9].includes(type)).toBe(true);
            expect(trading).toBe(false);
            if (type === 9) {
              // Nothing in that local week trades (checked every 30 minutes, weeks told apart by Intl).
              const week = localWeekOf(t, cal.timeZone);
              for (let u = t - 8 * 86_400_000; u < t + 8 * 86_400_000; u += 1_800_000)
                if (localWeekOf(u, cal.timeZone) === week) expect(isTradingAt(cal, u)).toBe(false);
            }
            return;
          }
          // A stock's daily, weekly or monthly bar labelled inside a session lies within its period;
          // every other label comes no later than the bar's first trade.
          if (labelling.daily === 'in-session' && type >= 8 && cal.segments.length > 0)
            expect(p.startMs).toBeLessThan(p.endMs);
          else expect(p.startMs).toBeLessThanOrEqual(p.tradesFromMs);
          expect(p.tradesFromMs).toBeLessThan(p.endMs);
          if (trading) {
            expect(p.tradesFromMs).toBeLessThanOrEqual(t);
            expect(p.endMs).toBeGreaterThan(t);
          }
          if (cal.segments.length === 0) {
            expect(p.startMs).toBe(p.tradesFromMs);
            expect(p.startMs).toBeLessThanOrEqual(t);
            expect(p.endMs).toBeGreaterThan(t);
          }
          const periodMs = SIM_KLINE_PERIOD_MS[type];
          if (periodMs !== undefined) expect(p.endMs - p.startMs).toBeLessThanOrEqual(periodMs);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe('simBarPeriodAt: stock bar labellings', () => {
  it("intraday 'session' anchors hourly bars at 09:30 and 13:00; 'clock' at the local hour", () => {
    // 2026-01-13, a Tuesday: New York UTC-5, Hong Kong and Shanghai UTC+8.
    const day = '2026-01-13T12:00:00Z';
    expect(dayLabels('2026-01-13T18:00:00Z', 5, SIM_CALENDARS.us, { intraday: 'session' })).toEqual([
      '14:30',
      '15:30',
      '16:30',
      '17:30',
      '18:30',
      '19:30',
      '20:30',
    ]);
    expect(dayLabels('2026-01-13T18:00:00Z', 5, SIM_CALENDARS.us, { intraday: 'clock' })).toEqual([
      '14:00',
      '15:00',
      '16:00',
      '17:00',
      '18:00',
      '19:00',
      '20:00',
    ]);
    expect(dayLabels(day, 5, SIM_CALENDARS.hk, { intraday: 'session' })).toEqual([
      '01:30',
      '02:30',
      '03:30',
      '05:00',
      '06:00',
      '07:00',
    ]);
    expect(dayLabels(day, 5, SIM_CALENDARS.hk, { intraday: 'clock' })).toEqual([
      '01:00',
      '02:00',
      '03:00',
      '05:00',
      '06:00',
      '07:00',
    ]);
    expect(dayLabels(day, 5, SIM_CALENDARS.cn, { intraday: 'session' })).toEqual([
      '01:30',
      '02:30',
      '05:00',
      '06:00',
    ]);
    expect(dayLabels(day, 5, SIM_CALENDARS.cn, { intraday: 'clock' })).toEqual([
      '01:00',
      '02:00',
      '03:00',
      '05:00',
      '06:00',
    ]);
  });

  it("intraday 'clock': the first US hourly bar in January is labelled 14:00 UTC and holds 09:30-10:00 New York", () => {
    expect(
      simBarPeriodAt(utc('2026-01-13T14:45:00Z'), 5, SIM_CALENDARS.us, {
        ...SIM_DEFAULT_LABELLING,
        intraday: 'clock',
      }),
    ).toEqual({
      startMs: utc('2026-01-13T14:00:00Z'),
      tradesFromMs: utc('2026-01-13T14:30:00Z'),
      endMs: utc('2026-01-13T15:00:00Z'),
    });
    // In July (UTC-4) it is 13:00 UTC; the Shanghai morning's last clock hour ends at 11:30.
    expect(labelOf('2026-07-14T13:31:00Z', 5, SIM_CALENDARS.us, { intraday: 'clock' })).toBe(
      '2026-07-14T13:00:00.000Z',
    );
    expect(
      simBarPeriodAt(utc('2026-01-13T03:10:00Z'), 5, SIM_CALENDARS.cn, {
        ...SIM_DEFAULT_LABELLING,
        intraday: 'clock',
      }),
    ).toEqual({
      startMs: utc('2026-01-13T03:00:00Z'),
      tradesFromMs: utc('2026-01-13T03:00:00Z'),
      endMs: utc('2026-01-13T03:30:00Z'),
    });
    expect(labelOf('2026-01-13T14:00:00Z', 5, SIM_CALENDARS.us, { intraday: 'clock' })).toBeUndefined(); // before the open
  });

  it('1, 5, 15 and 30-minute bars come out the same under both intraday readings', () => {
    for (const cal of [SIM_CALENDARS.us, SIM_CALENDARS.hk, SIM_CALENDARS.cn]) {
      for (const type of [1, 2, 3, 4]) {
        for (let t = utc('2026-01-12T00:00:00Z'); t < utc('2026-01-14T00:00:00Z'); t += 7 * 60_000) {
          expect(simBarPeriodAt(t, type, cal, { ...SIM_DEFAULT_LABELLING, intraday: 'clock' })).toEqual(
            simBarPeriodAt(t, type, cal, SIM_DEFAULT_LABELLING),
          );
        }
      }
    }
  });

  it("daily: trading date D is labelled D 00:00 local, D 00:00 UTC, D's first open or 20 minutes before D's close, and holds D's session", () => {
    const cases: [SimCalendar, string, Record<SimLabelling['daily'], string>, string, string][] = [
      [
        SIM_CALENDARS.us,
        '2026-01-13T15:00:00Z',
        {
          'local-midnight': '2026-01-13T05:00:00.000Z',
          'utc-midnight': '2026-01-13T00:00:00.000Z',
          'session-open': '2026-01-13T14:30:00.000Z',
          'in-session': '2026-01-13T20:40:00.000Z', // 15:40 New York
        },
        '2026-01-13T14:30:00.000Z',
        '2026-01-13T21:00:00.000Z',
      ],
      [
        SIM_CALENDARS.us,
        '2026-07-14T19:00:00Z',
        {
          'local-midnight': '2026-07-14T04:00:00.000Z',
          'utc-midnight': '2026-07-14T00:00:00.000Z',
          'session-open': '2026-07-14T13:30:00.000Z',
          'in-session': '2026-07-14T19:40:00.000Z',
        },
        '2026-07-14T13:30:00.000Z',
        '2026-07-14T20:00:00.000Z',
      ],
      [
        SIM_CALENDARS.hk,
        '2026-01-13T06:00:00Z',
        {
          'local-midnight': '2026-01-12T16:00:00.000Z',
          'utc-midnight': '2026-01-13T00:00:00.000Z',
          'session-open': '2026-01-13T01:30:00.000Z',
          'in-session': '2026-01-13T07:40:00.000Z', // 15:40 Hong Kong
        },
        '2026-01-13T01:30:00.000Z',
        '2026-01-13T08:00:00.000Z',
      ],
      [
        SIM_CALENDARS.cn,
        '2026-01-13T06:00:00Z',
        {
          'local-midnight': '2026-01-12T16:00:00.000Z',
          'utc-midnight': '2026-01-13T00:00:00.000Z',
          'session-open': '2026-01-13T01:30:00.000Z',
          'in-session': '2026-01-13T06:40:00.000Z', // 14:40 Shanghai
        },
        '2026-01-13T01:30:00.000Z',
        '2026-01-13T07:00:00.000Z',
      ],
    ];
    for (const [cal, at, labels, from, end] of cases) {
      for (const [daily, label] of Object.entries(labels)) {
        const p = simBarPeriodAt(utc(at), 8, cal, {
          ...SIM_DEFAULT_LABELLING,
          daily: daily as SimLabelling['daily'],
        })!;
        expect([cal.id, daily, new Date(p.startMs).toISOString()]).toEqual([cal.id, daily, label]);
        expect(new Date(p.tradesFromMs).toISOString()).toBe(from);
        expect(new Date(p.endMs).toISOString()).toBe(end);
      }
    }
    // No bar for a stock on a Saturday.
    expect(simBarPeriodAt(utc('2026-01-17T15:00:00Z'), 8, SIM_CALENDARS.us)).toBeUndefined();
  });

  it("daily 'in-session': 20 minutes before the day's own close, a half day's early one included; a holiday Monday's weekly label at the regular hours", () => {
    const inSession = { daily: 'in-session' } as const;
    // The day after Thanksgiving 2025 closes at 13:00 New York; Christmas Eve 2025 in Hong Kong at 12:00.
    expect(labelOf('2025-11-28T15:00:00Z', 8, SIM_CALENDARS.us, inSession)).toBe('2025-11-28T17:40:00.000Z');
    expect(labelOf('2025-12-24T02:00:00Z', 8, SIM_CALENDARS.hk, inSession)).toBe('2025-12-24T03:40:00.000Z');
    // The week of Martin Luther King Day 2026 (Monday 19 January), labelled on that Monday.
    expect(labelOf('2026-01-21T15:00:00Z', 9, SIM_CALENDARS.us, { ...inSession, weekly: 'calendar' })).toBe(
      '2026-01-19T20:40:00.000Z',
    );
    expect(
      labelOf('2026-01-21T15:00:00Z', 9, SIM_CALENDARS.us, { ...inSession, weekly: 'first-trading-day' }),
    ).toBe('2026-01-20T20:40:00.000Z');
  });

  it("weekly: labelled on Monday ('calendar') or the first trading day, at the daily reading's time; both are Monday without holidays", () => {
    for (const weekly of ['calendar', 'first-trading-day'] as const) {
      expect(labelOf('2026-01-15T15:00:00Z', 9, SIM_CALENDARS.us, { weekly })).toBe(
        '2026-01-12T05:00:00.000Z',
      );
      expect(labelOf('2026-01-15T15:00:00Z', 9, SIM_CALENDARS.us, { weekly, daily: 'utc-midnight' })).toBe(
        '2026-01-12T00:00:00.000Z',
      );
      expect(labelOf('2026-01-15T06:00:00Z', 9, SIM_CALENDARS.hk, { weekly, daily: 'utc-midnight' })).toBe(
        '2026-01-12T00:00:00.000Z',
      );
      expect(labelOf('2026-01-15T06:00:00Z', 9, SIM_CALENDARS.cn, { weekly, daily: 'session-open' })).toBe(
        '2026-01-12T01:30:00.000Z',
      );
      expect(labelOf('2026-01-15T06:00:00Z', 9, SIM_CALENDARS.cn, { weekly, daily: 'local-midnight' })).toBe(
        '2026-01-11T16:00:00.000Z',
      );
    }
    expect(simBarPeriodAt(utc('2026-01-15T06:00:00Z'), 9, SIM_CALENDARS.hk)).toMatchObject({
      tradesFromMs: utc('2026-01-12T01:30:00Z'),
      endMs: utc('2026-01-16T08:00:00Z'),
    });
  });

  it("monthly: labelled on the 1st ('calendar') or the first trading day, at the daily reading's time of that date", () => {
    // February 2026 starts on a Sunday: its first trading day is Monday the 2nd.
    const at = '2026-02-10T15:00:00Z';
    expect(labelOf(at, 10, SIM_CALENDARS.us, { monthly: 'calendar' })).toBe('2026-02-01T05:00:00.000Z');
    expect(labelOf(at, 10, SIM_CALENDARS.us, { monthly: 'first-trading-day' })).toBe(
      '2026-02-02T05:00:00.000Z',
    );
    expect(labelOf(at, 10, SIM_CALENDARS.us, { monthly: 'calendar', daily: 'utc-midnight' })).toBe(
      '2026-02-01T00:00:00.000Z',
    );
    expect(labelOf(at, 10, SIM_CALENDARS.us, { monthly: 'first-trading-day', daily: 'session-open' })).toBe(
      '2026-02-02T14:30:00.000Z',
    );
    // 'calendar' with 'session-open': the open's time of day on the 1st, although nothing trades then.
    expect(labelOf(at, 10, SIM_CALENDARS.us, { monthly: 'calendar', daily: 'session-open' })).toBe(
      '2026-02-01T14:30:00.000Z',
    );
    expect(
      labelOf('2026-02-10T06:00:00Z', 10, SIM_CALENDARS.hk, {
        monthly: 'first-trading-day',
        daily: 'utc-midnight',
      }),
    ).toBe('2026-02-02T00:00:00.000Z');
    expect(labelOf('2026-02-10T06:00:00Z', 10, SIM_CALENDARS.cn, { monthly: 'first-trading-day' })).toBe(
      '2026-02-01T16:00:00.000Z',
    );
    expect(labelOf('2026-02-10T06:00:00Z', 10, SIM_CALENDARS.cn, { monthly: 'calendar' })).toBe(
      '2026-01-31T16:00:00.000Z',
    );
    expect(simBarPeriodAt(utc(at), 10, SIM_CALENDARS.us)).toMatchObject({
      tradesFromMs: utc('2026-02-02T14:30:00Z'),
      endMs: utc('2026-02-27T21:00:00Z'), // Friday the 27th, 16:00 New York
    });
  });

  it('leaves 24-hour markets UTC-aligned under every labelling', () => {
    for (const labelling of SIM_LABELLINGS) {
      for (const type of [5, 8, 9, 10]) {
        expect(simBarPeriodAt(utc('2026-02-10T15:20:00Z'), type, SIM_CALENDARS.crypto, labelling)).toEqual(
          simBarPeriodAt(utc('2026-02-10T15:20:00Z'), type, SIM_CALENDARS.crypto),
        );
      }
    }
    expect(
      labelOf('2026-02-10T15:20:00Z', 10, SIM_CALENDARS.weekdays, { monthly: 'first-trading-day' }),
    ).toBe('2026-02-01T00:00:00.000Z');
  });

  it('closes a US weekly bar at 16:00 New York on Friday in the weeks around the start of daylight saving time', () => {
    // DST starts on Sunday 2026-03-08: the week of Monday the 2nd is EST (UTC-5), the next one EDT (UTC-4).
    for (const labelling of SIM_LABELLINGS) {
      expect(simBarPeriodAt(utc('2026-03-04T15:00:00Z'), 9, SIM_CALENDARS.us, labelling)).toMatchObject({
        tradesFromMs: utc('2026-03-02T14:30:00Z'),
        endMs: utc('2026-03-06T21:00:00Z'),
      });
      expect(simBarPeriodAt(utc('2026-03-11T15:00:00Z'), 9, SIM_CALENDARS.us, labelling)).toMatchObject({
        tradesFromMs: utc('2026-03-09T13:30:00Z'),
        endMs: utc('2026-03-13T20:00:00Z'),
      });
    }
    expect(labelOf('2026-03-11T15:00:00Z', 9, SIM_CALENDARS.us)).toBe('2026-03-09T04:00:00.000Z');
    expect(labelOf('2026-03-11T15:00:00Z', 9, SIM_CALENDARS.us, { daily: 'session-open' })).toBe(
      '2026-03-09T13:30:00.000Z',
    );
    // The month DST starts in closes on Tuesday the 31st at 16:00 EDT.
    expect(simBarPeriodAt(utc('2026-03-04T15:00:00Z'), 10, SIM_CALENDARS.us)!.endMs).toBe(
      utc('2026-03-31T20:00:00Z'),
    );
  });
});

describe('nextTradingInstant', () => {
  it('steps from a weekend or the lunch break forward to the next open', () => {
    expect(nextTradingInstant(SIM_CALENDARS.us, utc('2026-11-21T12:00:00Z'))).toBe(
      utc('2026-11-23T14:30:00Z'),
    );
    expect(nextTradingInstant(SIM_CALENDARS.hk, utc('2026-11-17T04:30:00Z'))).toBe(
      utc('2026-11-17T05:00:00Z'),
    );
    expect(nextTradingInstant(SIM_CALENDARS.crypto, utc('2026-11-22T12:00:30Z'))).toBe(
      utc('2026-11-22T12:00:30Z'),
    );
  });
});

describe('lastTradingMinute', () => {
  it('steps from a weekend back to Friday’s last session minute', () => {
    expect(lastTradingMinute(SIM_CALENDARS.us, utc('2026-11-22T12:00:00Z'))).toBe(
      utc('2026-11-20T20:59:00Z'),
    );
    expect(lastTradingMinute(SIM_CALENDARS.weekdays, utc('2026-11-22T12:00:00Z'))).toBe(
      utc('2026-11-20T23:59:00Z'),
    );
    expect(lastTradingMinute(SIM_CALENDARS.crypto, utc('2026-11-22T12:00:30Z'))).toBe(
      utc('2026-11-22T12:00:00Z'),
    );
  });

  it('steps from the lunch break back to the end of the morning session', () => {
    expect(lastTradingMinute(SIM_CALENDARS.hk, utc('2026-11-17T04:30:00Z'))).toBe(
      utc('2026-11-17T03:59:00Z'),
    );
  });
});

/** The local date (YYYY-MM-DD) of the Monday of the week holding `ms` in `timeZone`, by Intl. */
function localWeekOf(ms: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    weekday: 'short',
  }).formatToParts(ms);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  const back = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday'));
  const monday = new Date(Date.UTC(Number(get('year')), Number(get('month')) - 1, Number(get('day')) - back));
  return monday.toISOString().slice(0, 10);
}
