import { describe, expect, it } from 'vitest';
import { ManualClock, type QuoteflowClient } from '@quoteflow/core';
import { roundIntervalMs, ServiceHalts, START_WAIT_MS, suspensionExchangesOf } from './service-halts.js';

describe('suspensionExchangesOf', () => {
  it('asks both US exchanges for a US code, since the code does not say which one lists it', () => {
    expect(suspensionExchangesOf(['AAPL.US'])).toEqual(['nyse', 'nasdaq']);
  });

  it('asks Shanghai for a Shanghai code, in the order of EXCHANGES', () => {
    expect(suspensionExchangesOf(['TSLA.US', '600000.SH'])).toEqual(['sse', 'nyse', 'nasdaq']);
  });

  it('asks nothing for codes no suspension endpoint covers', () => {
    expect(suspensionExchangesOf(['BTCUSDT', '700.HK', '000001.SZ', 'EURUSD'])).toEqual([]);
  });
});

describe('ServiceHalts.start', () => {
  const halts = (suspensions: () => Promise<never[]>, clock: ManualClock) =>
    new ServiceHalts({
      client: { suspensions, limits: { perDay: 864_000 } } as unknown as QuoteflowClient,
      clock,
      signal: new AbortController().signal,
      universe: ['AAPL.US'],
      emitEvent: () => undefined,
      on: true,
    });

  it('waits for the first answer, not for the rest of the round', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 16, 15));
    const asked: number[] = [];
    const known = halts(() => (asked.push(clock.now()), Promise.resolve([])), clock);
    let started = false;
    void known.start().then(() => (started = true));
    await clock.advance(0);
    expect(started).toBe(true);
    expect(asked).toHaveLength(2); // nyse, then nasdaq: the scheduler (not this fake) spaces them
    known.stop();
  });

  it('stops waiting after START_WAIT_MS when the token keeps its suspension query busy', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 16, 15));
    const known = halts(() => new Promise<never[]>(() => undefined), clock);
    let started = false;
    void known.start().then(() => (started = true));
    await clock.advance(START_WAIT_MS - 1);
    expect(started).toBe(false);
    await clock.advance(1);
    expect(started).toBe(true);
    known.stop();
  });
});

describe('roundIntervalMs', () => {
  it('spends at most 1% of the daily budget on halts, and asks once a minute at most', () => {
    // Free: 1,000 a day, 1% = 10 queries; two exchanges a round: 5 rounds a day, 4.8 h apart.
    expect(roundIntervalMs(1_000, 2)).toBe(17_280_000);
    // Basic: 86,400 a day, 1% = 864 queries: 432 rounds of two, 200 s apart.
    expect(roundIntervalMs(86_400, 2)).toBe(200_000);
    expect(roundIntervalMs(864_000, 2)).toBe(60_000);
    expect(roundIntervalMs(864_000, 1)).toBe(60_000);
  });
});
