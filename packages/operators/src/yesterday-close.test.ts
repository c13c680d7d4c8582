import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { calendarOf } from '@quoteflow/core';
import { sessionOn, zonedToUtcMs } from '@quoteflow/core/internal';
import type { Bar, TradingCalendar } from '@quoteflow/core';
import type { TradingSession } from '@quoteflow/core/internal';
import { yesterdayClose, yesterdayCloses } from './yesterday-close.js';
import { bar } from '../test-support/bars.js';

const DAY = 86_400_000;
const D0 = Date.UTC(2024, 2, 14) - 8 * 3_600_000; // 2024-03-14 00:00 Asia/Shanghai
const day = (code: string, k: number, close: number): Bar => bar(code, 8, D0 + k * DAY, close);

describe('yesterdayCloses', () => {
  it('takes the close of the bar with the smaller timestamp and the change of the newer close', () => {
    const [y] = yesterdayCloses([day('600416.SH', 1, 11), day('600416.SH', 0, 10)]);
    expect(y).toEqual({
      type: 'yesterday-close',
      code: '600416.SH',
      prevTsMs: D0,
      prevDate: '2024-03-14',
      prevClose: 10,
      latestPrice: 11,
      latestTsMs: D0 + DAY,
      latestDate: '2024-03-15',
      change: 1,
      changePercent: 10,
    });
  });

  it('survives newest-first repeated rows and uses the two newest distinct days', () => {
    const rows = [day('A', 2, 12), day('A', 1, 8), day('A', 2, 12), day('A', 1, 8), day('A', 0, 99)];
    expect(yesterdayCloses(rows)[0]).toMatchObject({
      prevClose: 8,
      latestPrice: 12,
      change: 4,
      changePercent: 50,
    });
  });

  it('uses a given latest price instead of the newest close', () => {
    const [y] = yesterdayCloses([day('A', 0, 20), day('A', 1, 21)], new Map([['A', 19]]));
    expect(y).toMatchObject({ prevClose: 20, latestPrice: 19, change: -1, changePercent: -5 });
  });

  it('gives no previous close for a single day and no percent for a zero close', () => {
    expect(yesterdayCloses([day('A', 0, 5)])[0]).toMatchObject({
      prevClose: undefined,
      change: undefined,
      changePercent: undefined,
    });
    expect(yesterdayCloses([day('A', 0, 0), day('A', 1, 5)])[0]).toMatchObject({
      change: 5,
      changePercent: undefined,
    });
  });

  it('ignores bars of other kline types and keeps codes apart in order of appearance', () => {
    const out = yesterdayCloses([
      day('B', 1, 2),
      bar('B', 1, D0, 100),
      day('A', 0, 1),
      day('B', 0, 1),
      day('A', 1, 3),
    ]);
    expect(out.map((y) => [y.code, y.prevClose, y.latestPrice])).toEqual([
      ['B', 1, 2],
      ['A', 1, 3],
    ]);
  });
});

describe('yesterdayClose', () => {
  const run = (fn: Parameters<TestScheduler['run']>[0]) =>
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(fn);
  it('emits one record per code of each batch and forwards completion and errors', () => {
    run(({ cold, expectObservable }) => {
      const batch = [day('A', 0, 1), day('A', 1, 2), day('B', 0, 4), day('B', 1, 2)];
      const [a, b] = yesterdayCloses(batch);
      expectObservable(cold('x 9ms y 9ms |', { x: batch, y: [] as Bar[] }).pipe(yesterdayClose())).toBe(
        '(ab) 16ms |',
        { a, b },
      );
      expectObservable(cold<Bar[]>('|').pipe(yesterdayClose())).toBe('|');
      expectObservable(cold<Bar[]>('-').pipe(yesterdayClose())).toBe('-');
      expectObservable(cold<Bar[]>('#').pipe(yesterdayClose())).toBe('#');
    });
  });
});

describe('yesterdayCloses when the service has a bar on a calendar holiday (issue 28 item 3)', () => {
  it('names each bar by the date its label names: previous and latest never share a date', () => {
    // Thanksgiving 2026 (2026-11-26) is a holiday by the calendar; the service served a bar for it.
    const holiday = bar('AAPL.US', 8, Date.parse('2026-11-26T00:00:00Z'), 100);
    const friday = bar('AAPL.US', 8, Date.parse('2026-11-27T00:00:00Z'), 101);
    const [y] = yesterdayCloses([holiday, friday]);
    expect(y).toMatchObject({ prevDate: '2026-11-26', latestDate: '2026-11-27', prevClose: 100 });
  });
});

describe('yesterdayCloses dates, under every daily labelling, at every exchange (issue 33 item 3)', () => {
  const LABELLINGS = ['utc-midnight', 'local-midnight', 'open', 'in-session'] as const;
  const CODES = ['AAPL.US', 'TSLA.US', '700.HK', '600416.SH', '000627.SZ'] as const;
  const FIRST = Date.UTC(2013, 0, 2);
  const DAYS = Math.floor((Date.UTC(2026, 11, 1) - FIRST) / DAY);

  /** The daily label of the session `s` of `cal` under `labelling` (`at`: where in the session). */
  const labelOf = (
    cal: TradingCalendar,
    s: TradingSession,
    labelling: (typeof LABELLINGS)[number],
    at: number,
  ): number => {
    const [y, m, d] = s.date.split('-').map(Number) as [number, number, number];
    if (labelling === 'utc-midnight') return Date.UTC(y, m - 1, d);
    if (labelling === 'local-midnight') return zonedToUtcMs(cal.timeZone, y, m, d);
    if (labelling === 'open') return s.openMs;
    return s.openMs + Math.floor(at * (s.closeMs - s.openMs));
  };

  /** The first two sessions of `cal` from the UTC date `fromMs` on (the oracle: the calendar's own sessions). */
  const twoSessions = (cal: TradingCalendar, fromMs: number): TradingSession[] => {
    const out: TradingSession[] = [];
    for (let ms = fromMs; out.length < 2; ms += DAY) {
      const d = new Date(ms);
      const s = sessionOn(cal, [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()]);
      if (s !== undefined) out.push(s);
    }
    return out;
  };

  it('the provider’s own 700.HK sample, 15:40 Hong Kong on Friday 3 March 2023, is dated that Friday', () => {
    const friday = bar('700.HK', 8, Date.parse('2023-03-03T07:40:00Z'), 10);
    const monday = bar('700.HK', 8, Date.parse('2023-03-06T07:40:00Z'), 11);
    expect(yesterdayCloses([friday, monday])[0]).toMatchObject({
      prevDate: '2023-03-03',
      latestDate: '2023-03-06',
    });
  });

  it('two consecutive sessions’ bars are dated by those sessions (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CODES),
        fc.integer({ min: 0, max: DAYS }),
        fc.constantFrom(...LABELLINGS),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (code, day, labelling, at) => {
          const cal = calendarOf(code);
          const [a, b] = twoSessions(cal, FIRST + day * DAY) as [TradingSession, TradingSession];
          const [y] = yesterdayCloses([
            bar(code, 8, labelOf(cal, a, labelling, at), 1),
            bar(code, 8, labelOf(cal, b, labelling, at), 2),
          ]);
          expect([y?.prevDate, y?.latestDate]).toEqual([a.date, b.date]);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
