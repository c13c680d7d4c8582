import { describe, expect, it } from 'vitest';
import { suspensionExchangesOf } from './service-halts.js';

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
