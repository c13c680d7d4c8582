import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sessionOn } from '../trading-sessions.js';
import { EXCHANGE_IDS } from './exchange-calendar-data.js';
import { EXCHANGE_CALENDARS, exchangeCalendarData } from './trading-calendar.js';
import { tradingSegmentsOn } from './trading-segments-on.js';

const iso = (ms: number) => new Date(ms).toISOString();
const segmentsIso = (exchange: keyof typeof EXCHANGE_CALENDARS, date: [number, number, number]) =>
  tradingSegmentsOn(EXCHANGE_CALENDARS[exchange], date).map(([s, e]) => [iso(s), iso(e)]);

/**
 * Oracle independent of Temporal: the instant of a local wall-clock time found by searching the
 * UTC hours whose Intl-formatted local time matches it.
 */
function intlWallClockMs(timeZone: string, date: string, hhmm: string): number {
  const fmt = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const guess = Date.parse(`${date}T${hhmm}:00Z`);
  for (let h = -14; h <= 14; h++) {
    const t = guess - h * 3_600_000;
    if (fmt.format(t) === `${date} ${hhmm}`) return t;
  }
  throw new Error(`no instant for ${date} ${hhmm} in ${timeZone}`);
}

describe('tradingSegmentsOn (exchange calendars with holidays and early closes)', () => {
  it('has no New York session on Christmas Day 2025', () => {
    expect(segmentsIso('XNYS', [2025, 12, 25])).toEqual([]);
    expect(sessionOn(EXCHANGE_CALENDARS.XNAS, [2025, 12, 25])).toBeUndefined();
  });

  it('closes New York at 13:00 local on the day after Thanksgiving 2025', () => {
    expect(segmentsIso('XNYS', [2025, 11, 28])).toEqual([
      ['2025-11-28T14:30:00.000Z', '2025-11-28T18:00:00.000Z'],
    ]);
    expect(segmentsIso('XNYS', [2025, 11, 26])).toEqual([
      ['2025-11-26T14:30:00.000Z', '2025-11-26T21:00:00.000Z'],
    ]);
  });

  it('moves New York hours with daylight saving time in the week it starts (2026-03-08)', () => {
    expect(segmentsIso('XNYS', [2026, 3, 6])).toEqual([
      ['2026-03-06T14:30:00.000Z', '2026-03-06T21:00:00.000Z'],
    ]);
    expect(segmentsIso('XNYS', [2026, 3, 9])).toEqual([
      ['2026-03-09T13:30:00.000Z', '2026-03-09T20:00:00.000Z'],
    ]);
  });

  it('breaks Hong Kong for lunch from 12:00 to 13:00 and Shanghai from 11:30 to 13:00', () => {
    expect(segmentsIso('XHKG', [2025, 11, 24])).toEqual([
      ['2025-11-24T01:30:00.000Z', '2025-11-24T04:00:00.000Z'],
      ['2025-11-24T05:00:00.000Z', '2025-11-24T08:00:00.000Z'],
    ]);
    expect(segmentsIso('XSHE', [2025, 11, 24])).toEqual([
      ['2025-11-24T01:30:00.000Z', '2025-11-24T03:30:00.000Z'],
      ['2025-11-24T05:00:00.000Z', '2025-11-24T07:00:00.000Z'],
    ]);
  });

  it('closes for Lunar New Year 2025: Hong Kong trades the eve morning only, Shanghai a week off', () => {
    expect(segmentsIso('XHKG', [2025, 1, 28])).toEqual([
      ['2025-01-28T01:30:00.000Z', '2025-01-28T04:00:00.000Z'],
    ]);
    for (const day of [29, 30, 31]) expect(segmentsIso('XHKG', [2025, 1, day])).toEqual([]);
    for (const [m, d] of [
      [1, 28],
      [1, 29],
      [1, 31],
      [2, 3],
      [2, 4],
    ] as const)
      expect(segmentsIso('XSHG', [2025, m, d]), `${m}-${d}`).toEqual([]);
    expect(segmentsIso('XSHG', [2025, 2, 5])).toHaveLength(2);
  });

  it('has no sessions on weekends', () => {
    for (const id of EXCHANGE_IDS) expect(segmentsIso(id, [2025, 11, 22])).toEqual([]);
  });

  it('opens each weekday that is not a holiday at its regular or special local hours (Intl oracle)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EXCHANGE_IDS),
        fc.integer({ min: Date.UTC(2013, 0, 1), max: Date.UTC(2026, 11, 31) }),
        (id, ms) => {
          const data = exchangeCalendarData(id);
          const date = new Date(ms).toISOString().slice(0, 10);
          const [y, m, d] = date.split('-').map(Number) as [number, number, number];
          const weekday = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
          const session = sessionOn(EXCHANGE_CALENDARS[id], [y, m, d]);
          if (weekday === 0 || weekday === 6 || data.holidays.includes(date)) {
            expect(session).toBeUndefined();
            return;
          }
          const open = data.lateOpens[date] ?? data.regular.open;
          const close = data.earlyCloses[date] ?? data.regular.close;
          expect(session?.openMs).toBe(intlWallClockMs(data.timeZone, date, open));
          expect(session?.closeMs).toBe(intlWallClockMs(data.timeZone, date, close));
        },
      ),
      { numRuns: 500 },
    );
  });
});
