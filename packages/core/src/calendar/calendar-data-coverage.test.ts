import { afterEach, describe, expect, it, vi } from 'vitest';
import { calendarDataCoverage } from './calendar-data-coverage.js';
import { EXCHANGE_CALENDARS } from './trading-calendar.js';
import { tradingSegmentsOn } from './trading-segments-on.js';

const YEAR_MS = 365 * 86_400_000;

describe('calendar data coverage', () => {
  afterEach(() => vi.restoreAllMocks());

  // Real time on purpose: this test is the reminder to regenerate (scripts/calendars/generate.py).
  it('reaches a year ahead, or the end of this year for exchanges that publish holidays yearly', () => {
    const now = Date.now();
    const endOfYear = `${new Date(now).getUTCFullYear()}-12-31`;
    for (const c of calendarDataCoverage()) {
      const endMs = Date.parse(`${c.lastDate}T00:00:00Z`);
      if (c.publishing === 'yearly') {
        expect(c.lastDate >= endOfYear, `${c.exchange} data ends ${c.lastDate}, before this year's end`).toBe(
          true,
        );
        if (endMs < now + YEAR_MS)
          console.warn(
            `${c.exchange} holiday data ends ${c.lastDate}: regenerate once next year's holidays are published`,
          );
      } else {
        expect(endMs, `${c.exchange} data ends ${c.lastDate}, within a year`).toBeGreaterThanOrEqual(
          now + YEAR_MS,
        );
      }
    }
  });

  it('names the source and the first date of every exchange', () => {
    for (const c of calendarDataCoverage()) {
      expect(c.source).toMatch(/^exchange_calendars \d/);
      expect(c.firstDate <= '2013-01-01').toBe(true);
    }
  });

  it('past the end of the data, warns once naming the exchange and the date and assumes a regular session', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const end = calendarDataCoverage().find((c) => c.exchange === 'XSHG')!.lastDate;
    const [y] = end.split('-').map(Number) as [number];
    // The first Monday after the data's end.
    let day = new Date(Date.UTC(y, 11, 31) + 86_400_000);
    while (day.getUTCDay() !== 1) day = new Date(day.getTime() + 86_400_000);
    const date: [number, number, number] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    expect(tradingSegmentsOn(EXCHANGE_CALENDARS.XSHG, date)).toHaveLength(2);
    expect(tradingSegmentsOn(EXCHANGE_CALENDARS.XSHG, [date[0], date[1], date[2] + 1])).toHaveLength(2);
    expect(warn).toHaveBeenCalledTimes(1);
    const message = String(warn.mock.calls[0]?.[0]);
    expect(message).toContain('XSHG');
    expect(message).toContain(day.toISOString().slice(0, 10));
    expect(message).toContain(end);
  });
});
