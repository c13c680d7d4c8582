import { describe, expect, it } from 'vitest';
import { expectedBarsBetween } from './expected-bars-between.js';

const utc = (iso: string): number => Date.parse(`${iso}Z`);

describe('expectedBarsBetween', () => {
  it('gives the first and last bar the calendar expects between two bars, and how many', () => {
    // Friday 15:58 EST to Monday 09:33 EDT (DST began on Sunday 8 March): 15:59 on Friday, then
    // 09:30, 09:31 and 09:32 on Monday, one hour earlier in UTC than the week before.
    expect(expectedBarsBetween('AAPL.US', 1, utc('2026-03-06T20:58'), utc('2026-03-09T13:33'))).toEqual({
      count: 4,
      firstMs: utc('2026-03-06T20:59'),
      lastMs: utc('2026-03-09T13:32'),
    });
    // Hong Kong 11:58 to 13:02 across the lunch break (12:00-13:00): 11:59, 13:00 and 13:01.
    expect(expectedBarsBetween('700.HK', 1, utc('2026-03-03T03:58'), utc('2026-03-03T05:02'))).toEqual({
      count: 3,
      firstMs: utc('2026-03-03T03:59'),
      lastMs: utc('2026-03-03T05:01'),
    });
    // A 24-hour market: every UTC minute.
    expect(expectedBarsBetween('BTCUSDT', 1, utc('2026-01-01T00:00'), utc('2026-01-01T00:05'))).toEqual({
      count: 4,
      firstMs: utc('2026-01-01T00:01'),
      lastMs: utc('2026-01-01T00:04'),
    });
  });

  it('gives none between consecutive bars, or when the second is not later', () => {
    const none = { count: 0, firstMs: undefined, lastMs: undefined };
    expect(expectedBarsBetween('AAPL.US', 1, utc('2026-03-06T20:59'), utc('2026-03-09T13:30'))).toEqual(none);
    expect(expectedBarsBetween('BTCUSDT', 1, utc('2026-01-01T00:05'), utc('2026-01-01T00:05'))).toEqual(none);
  });
});
