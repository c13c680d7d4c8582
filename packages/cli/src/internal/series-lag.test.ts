import { describe, expect, it } from 'vitest';
import { SeriesLag } from './series-lag.js';

const at = (iso: string): number => Date.parse(iso);
const lagOf = (lag: SeriesLag, code: string, klineType: number, nowIso: string): number | undefined =>
  lag.lags(at(nowIso)).find((l) => l.code === code && l.klineType === klineType)?.seconds;

describe('SeriesLag', () => {
  it('counts a crypto series behind from one bar period after its newest final read, and a new read resets it', () => {
    const lag = new SeriesLag();
    lag.onFinal('BTCUSDT', 1, at('2026-03-07T12:00:05Z')); // a Saturday: crypto trades
    expect(lagOf(lag, 'BTCUSDT', 1, '2026-03-07T12:01:05Z')).toBe(0);
    expect(lagOf(lag, 'BTCUSDT', 1, '2026-03-07T12:02:35Z')).toBe(90);
    lag.onFinal('BTCUSDT', 1, at('2026-03-07T12:02:40Z'));
    expect(lagOf(lag, 'BTCUSDT', 1, '2026-03-07T12:03:00Z')).toBe(0);
  });

  it('stands still while New York is closed, and counts from its open (a minute early) the next morning', () => {
    const lag = new SeriesLag();
    // The last minute of Wednesday 4 March read after the close (16:00 New York = 21:00 UTC).
    lag.onFinal('AAPL.US', 1, at('2026-03-04T21:00:30Z'));
    expect(lagOf(lag, 'AAPL.US', 1, '2026-03-05T14:00:00Z')).toBe(0);
    // 09:30 New York is 14:30 UTC; the market may trade from 14:29: 6 minutes, one of them a period.
    expect(lagOf(lag, 'AAPL.US', 1, '2026-03-05T14:35:00Z')).toBe(300);
  });

  it("stands still through Hong Kong's lunch break", () => {
    const lag = new SeriesLag();
    // 12:00 Hong Kong (UTC+8) is 04:00 UTC; the afternoon session opens at 13:00 (05:00 UTC).
    lag.onFinal('700.HK', 1, at('2026-03-05T04:00:10Z'));
    expect(lagOf(lag, '700.HK', 1, '2026-03-05T04:58:00Z')).toBe(0);
    expect(lagOf(lag, '700.HK', 1, '2026-03-05T05:03:00Z')).toBe(180);
  });

  it('keeps a daily stock series at 0 through a whole session, and counts the trading time of the sessions it misses', () => {
    const lag = new SeriesLag();
    lag.onFinal('AAPL.US', 8, at('2026-03-04T21:05:00Z'));
    expect(lagOf(lag, 'AAPL.US', 8, '2026-03-05T20:59:00Z')).toBe(0);
    // Five sessions later (Thursday to Wednesday, across New York's change to summer time on 8
    // March: 13:30 UTC opens from Monday), each 391 minutes with the minute before the open: 1,955
    // minutes of trading, one day of them the bar's period.
    expect(lagOf(lag, 'AAPL.US', 8, '2026-03-11T20:00:00Z')).toBe(1_955 * 60 - 86_400);
  });

  it('keeps the newest read of a series when an older one comes after it', () => {
    const lag = new SeriesLag();
    lag.onFinal('BTCUSDT', 1, at('2026-03-07T12:05:00Z'));
    lag.onFinal('BTCUSDT', 1, at('2026-03-07T12:00:00Z'));
    expect(lagOf(lag, 'BTCUSDT', 1, '2026-03-07T12:06:00Z')).toBe(0);
  });
});
