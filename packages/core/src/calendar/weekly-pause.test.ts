import { describe, expect, it } from 'vitest';
import { isWeeklyMarketOpenAt, surelyTradingMsBetween } from './weekly-pause.js';

const t = (s: string) => Date.parse(s);

describe('the forex weekly pause', () => {
  it('closes at 17:00 New York on Friday and opens at 17:00 New York on Sunday, in both DST seasons', () => {
    expect(isWeeklyMarketOpenAt(t('2025-11-21T21:59:00Z'))).toBe(true); // EST: 16:59
    expect(isWeeklyMarketOpenAt(t('2025-11-21T22:00:00Z'))).toBe(false);
    expect(isWeeklyMarketOpenAt(t('2025-11-22T12:00:00Z'))).toBe(false);
    expect(isWeeklyMarketOpenAt(t('2025-11-23T21:59:00Z'))).toBe(false);
    expect(isWeeklyMarketOpenAt(t('2025-11-23T22:00:00Z'))).toBe(true);
    expect(isWeeklyMarketOpenAt(t('2025-06-13T20:59:00Z'))).toBe(true); // EDT: 16:59
    expect(isWeeklyMarketOpenAt(t('2025-06-13T21:00:00Z'))).toBe(false);
    expect(isWeeklyMarketOpenAt(t('2025-06-15T21:00:00Z'))).toBe(true);
  });

  it('counts as surely trading only Monday 00:00 UTC to Friday 17:00 New York, without 25 December', () => {
    const week = surelyTradingMsBetween(t('2025-11-22T00:00:00Z'), t('2025-11-29T00:00:00Z'));
    expect(week).toBe(t('2025-11-28T22:00:00Z') - t('2025-11-24T00:00:00Z'));
    expect(surelyTradingMsBetween(t('2025-11-21T22:00:00Z'), t('2025-11-24T00:00:00Z'))).toBe(0);
    expect(surelyTradingMsBetween(t('2025-12-25T00:00:00Z'), t('2025-12-26T00:00:00Z'))).toBe(0);
    expect(surelyTradingMsBetween(t('2025-12-26T00:00:00Z'), t('2025-12-25T00:00:00Z'))).toBe(0);
  });
});
