import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import type { Bar } from '@quoteflow/core';
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
