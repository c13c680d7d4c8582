import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isTradingAt,
  lastTradingMinute,
  SIM_CALENDARS,
  SIM_KLINE_PERIOD_MS,
  simBarPeriodAt,
} from './calendars.js';

const utc = (s: string) => Date.parse(s);

describe('simBarPeriodAt', () => {
  it('aligns 24-hour intraday periods to multiples of the period since the epoch', () => {
    const t = utc('2026-11-17T13:47:12.345Z');
    expect(simBarPeriodAt(t, 1, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-17T13:47:00Z'),
      endMs: utc('2026-11-17T13:48:00Z'),
    });
    expect(simBarPeriodAt(t, 4, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-17T13:30:00Z'),
      endMs: utc('2026-11-17T14:00:00Z'),
    });
    expect(simBarPeriodAt(t, 7, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-17T12:00:00Z'),
      endMs: utc('2026-11-17T16:00:00Z'),
    });
  });

  it('starts 24-hour daily, weekly and monthly bars at UTC midnight, Monday and the 1st', () => {
    const t = utc('2026-11-19T05:00:00Z'); // a Thursday
    expect(simBarPeriodAt(t, 8, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-19T00:00:00Z'),
      endMs: utc('2026-11-20T00:00:00Z'),
    });
    expect(simBarPeriodAt(t, 9, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-16T00:00:00Z'),
      endMs: utc('2026-11-23T00:00:00Z'),
    });
    expect(simBarPeriodAt(t, 10, SIM_CALENDARS.crypto)).toEqual({
      startMs: utc('2026-11-01T00:00:00Z'),
      endMs: utc('2026-12-01T00:00:00Z'),
    });
  });

  it('anchors US stock intraday periods at 09:30 New York and cuts the last one at the close', () => {
    // 2026-11-17 is in EST (UTC-5): 09:30 local = 14:30Z, 16:00 local = 21:00Z.
    expect(simBarPeriodAt(utc('2026-11-17T14:31:10Z'), 5, SIM_CALENDARS.us)).toEqual({
      startMs: utc('2026-11-17T14:30:00Z'),
      endMs: utc('2026-11-17T15:30:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T20:45:00Z'), 5, SIM_CALENDARS.us)).toEqual({
      startMs: utc('2026-11-17T20:30:00Z'),
      endMs: utc('2026-11-17T21:00:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T14:29:59Z'), 1, SIM_CALENDARS.us)).toBeUndefined();
    expect(simBarPeriodAt(utc('2026-11-21T15:00:00Z'), 1, SIM_CALENDARS.us)).toBeUndefined(); // Saturday
  });

  it('follows daylight saving time: 09:30 New York is 13:30Z in July', () => {
    expect(simBarPeriodAt(utc('2026-07-14T13:40:00Z'), 3, SIM_CALENDARS.us)).toEqual({
      startMs: utc('2026-07-14T13:30:00Z'),
      endMs: utc('2026-07-14T13:45:00Z'),
    });
  });

  it('re-anchors Hong Kong and A-share periods at 13:00 after the lunch break', () => {
    // HK 13:00 local = 05:00Z; A-shares 11:30 close of the morning = 03:30Z.
    expect(simBarPeriodAt(utc('2026-11-17T05:10:00Z'), 5, SIM_CALENDARS.hk)).toEqual({
      startMs: utc('2026-11-17T05:00:00Z'),
      endMs: utc('2026-11-17T06:00:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T03:10:00Z'), 5, SIM_CALENDARS.cn)).toEqual({
      startMs: utc('2026-11-17T02:30:00Z'),
      endMs: utc('2026-11-17T03:30:00Z'),
    });
    expect(simBarPeriodAt(utc('2026-11-17T04:10:00Z'), 1, SIM_CALENDARS.cn)).toBeUndefined(); // lunch
  });

  it('starts stock daily bars at local midnight and ends them with the close', () => {
    expect(simBarPeriodAt(utc('2026-11-17T15:00:00Z'), 8, SIM_CALENDARS.us)).toEqual({
      startMs: utc('2026-11-17T05:00:00Z'),
      endMs: utc('2026-11-17T21:00:00Z'),
    });
    // Weekly: Monday local midnight to Friday's close.
    expect(simBarPeriodAt(utc('2026-11-17T02:00:00Z'), 9, SIM_CALENDARS.cn)).toEqual({
      startMs: utc('2026-11-15T16:00:00Z'),
      endMs: utc('2026-11-20T07:00:00Z'),
    });
    // Monthly: November 2026 ends on Monday the 30th, whose close is 07:00Z.
    expect(simBarPeriodAt(utc('2026-11-17T02:00:00Z'), 10, SIM_CALENDARS.cn)).toEqual({
      startMs: utc('2026-10-31T16:00:00Z'),
      endMs: utc('2026-11-30T07:00:00Z'),
    });
  });

  it('returns a period containing the instant, for every calendar and intraday type', () => {
    const cals = Object.values(SIM_CALENDARS);
    fc.assert(
      fc.property(
        fc.integer({ min: utc('2020-01-01T00:00:00Z'), max: utc('2030-01-01T00:00:00Z') }),
        fc.constantFrom(...cals),
        fc.integer({ min: 1, max: 10 }),
        (t, cal, type) => {
          const p = simBarPeriodAt(t, type, cal);
          if (p === undefined) {
            expect(SIM_KLINE_PERIOD_MS[type]).toBeDefined();
            expect(isTradingAt(cal, t)).toBe(false);
            return;
          }
          expect(p.startMs).toBeLessThanOrEqual(t);
          if (cal.segments.length === 0 || SIM_KLINE_PERIOD_MS[type] !== undefined)
            expect(p.endMs).toBeGreaterThan(t);
          const periodMs = SIM_KLINE_PERIOD_MS[type];
          if (periodMs !== undefined) expect(p.endMs - p.startMs).toBeLessThanOrEqual(periodMs);
        },
      ),
      { numRuns: 500 },
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
