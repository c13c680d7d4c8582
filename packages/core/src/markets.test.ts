import { describe, expect, it } from 'vitest';
import { codeOfSuspendedSymbol, familyOf, stockMarketOf } from './markets.js';

describe('codeOfSuspendedSymbol', () => {
  it("names the product code of a suspension record's symbol, keeping a suffix it already has", () => {
    expect(codeOfSuspendedSymbol('sse', '600416')).toBe('600416.SH');
    expect(codeOfSuspendedSymbol('nyse', 'AAPL')).toBe('AAPL.US');
    expect(codeOfSuspendedSymbol('nasdaq', 'TSLA')).toBe('TSLA.US');
    expect(codeOfSuspendedSymbol('nasdaq', 'TSLA.US')).toBe('TSLA.US');
    // Every code it makes is a stock code served by the stock family.
    for (const code of [codeOfSuspendedSymbol('sse', '000627'), codeOfSuspendedSymbol('nyse', 'BRK.B')]) {
      expect(stockMarketOf(code)).toBeDefined();
      expect(familyOf(code)).toBe('stock');
    }
  });
});
