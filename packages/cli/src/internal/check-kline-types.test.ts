import { describe, expect, it } from 'vitest';
import { checkKlineTypes } from './check-kline-types.js';
import { UsageError } from './usage-error.js';

describe('checkKlineTypes', () => {
  it('refuses 2-hour and 4-hour bars for stock codes, naming the flag and the codes', () => {
    expect(() => checkKlineTypes(['BTCUSDT', 'AAPL.US', '700.HK'], [1, 6], '--kline-types')).toThrow(
      UsageError,
    );
    expect(() => checkKlineTypes(['AAPL.US'], [7], '--kline-type')).toThrow(
      /--kline-type 7: stock and index codes have no 4-hour bars \(AAPL\.US\)/,
    );
  });

  it('accepts every type for general-family codes and the other types for stocks', () => {
    expect(() => checkKlineTypes(['BTCUSDT', 'EURGBP'], [6, 7], '--kline-types')).not.toThrow();
    expect(() =>
      checkKlineTypes(['AAPL.US', '600416.SH'], [1, 2, 3, 4, 5, 8, 9, 10], '--kline-types'),
    ).not.toThrow();
  });
});
