import { describe, expect, it } from 'vitest';
import { exchangeLocalTime } from './exchange-local-time.js';

describe('exchangeLocalTime', () => {
  it("reads an instant on the code's exchange clock, daylight saving time included", () => {
    // New York: EST before 8 March 2026, EDT after.
    expect(exchangeLocalTime(Date.UTC(2026, 2, 6, 14, 31), 'AAPL.US')).toBe(
      '2026-03-06 09:31 America/New_York',
    );
    expect(exchangeLocalTime(Date.UTC(2026, 2, 9, 13, 31), 'AAPL.US')).toBe(
      '2026-03-09 09:31 America/New_York',
    );
    expect(exchangeLocalTime(Date.UTC(2026, 0, 5, 1, 30), '700.HK')).toBe('2026-01-05 09:30 Asia/Hong_Kong');
    expect(exchangeLocalTime(Date.UTC(2026, 0, 5, 1, 30), '600416.SH')).toBe(
      '2026-01-05 09:30 Asia/Shanghai',
    );
    expect(exchangeLocalTime(Date.UTC(2026, 0, 5, 23, 59), 'BTCUSDT')).toMatch(
      /^2026-01-05 23:59 (UTC|Etc\/UTC)$/,
    );
  });
});
