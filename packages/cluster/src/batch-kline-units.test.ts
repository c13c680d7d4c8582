import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calendarOf, planLimits, type KlineType } from '@quoteflow/core';
import { familyOf } from '@quoteflow/core/internal';
import { batchKlineUnits } from './batch-kline-units.js';

const CODES = [
  'BTCUSDT',
  'AAPL.US',
  'EURUSD',
  '700.HK',
  'ETHUSDT',
  'MSFT.US',
  'XAUUSD',
  '600000.SH',
  'SOLUSDT',
  'TSLA.US',
  'GBPUSD',
  '9988.HK',
];

/**
 * The `/batch-kline` requests one client's poll of every series sends: the series of each family,
 * in order, packed to the plan's cap (as core's poller packs them).
 */
function requestsOfOneClient(
  codes: readonly string[],
  klineTypes: readonly KlineType[],
  cap: number,
): number {
  let requests = 0;
  for (const family of ['stock', 'general'])
    requests += Math.ceil((codes.filter((c) => familyOf(c) === family).length * klineTypes.length) / cap);
  return requests;
}

describe('batchKlineUnits', () => {
  it('puts a universe one request carries in one unit per family', () => {
    expect(batchKlineUnits(CODES, [1, 5], planLimits('premium'))).toEqual([
      ['700.HK', '9988.HK', 'AAPL.US', 'MSFT.US', 'TSLA.US', '600000.SH'],
      ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'EURUSD', 'XAUUSD', 'GBPUSD'],
    ]);
  });

  it('cuts a larger universe into requests of the plan, codes of one market side by side', () => {
    const units = batchKlineUnits(CODES, [1, 5], { batchKlineGroups: 4 });
    // Two codes × two kline types fill a request of 4 groups.
    expect(units.every((u) => u.length <= 2)).toBe(true);
    expect(units).toHaveLength(6);
    for (const unit of units) {
      expect(new Set(unit.map(familyOf)).size).toBe(1);
    }
    // Within a family the markets come one after another: each market's codes in consecutive units.
    const order = units.flat().map((c) => calendarOf(c).id);
    for (const market of new Set(order)) {
      const at = order.flatMap((m, i) => (m === market ? [i] : []));
      expect(at.at(-1)! - at[0]!).toBe(at.length - 1);
    }
  });

  it('holds every code once, a unit never more than one request, and as many units as one client sends requests', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...CODES, ...CODES.map((c) => `X${c}`)), { minLength: 1 }),
        fc.uniqueArray(fc.constantFrom<KlineType>(1, 2, 3, 5, 6, 7, 8), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 12 }),
        (codes, klineTypes, perRequestCodes) => {
          // A cap that the kline types divide: then a unit is exactly a full request.
          const cap = perRequestCodes * klineTypes.length;
          const units = batchKlineUnits(codes, klineTypes, { batchKlineGroups: cap });
          expect(units.flat().sort()).toEqual([...codes].sort());
          for (const unit of units) {
            expect(unit.length * klineTypes.length).toBeLessThanOrEqual(cap);
            expect(new Set(unit.map(familyOf)).size).toBe(1);
          }
          expect(units).toHaveLength(requestsOfOneClient(codes, klineTypes, cap));
        },
      ),
    );
  });

  it('keeps a code whose kline types alone exceed a request in a unit of its own', () => {
    expect(batchKlineUnits(['BTCUSDT', 'ETHUSDT'], [1, 2, 3], { batchKlineGroups: 2 })).toEqual([
      ['BTCUSDT'],
      ['ETHUSDT'],
    ]);
  });

  it('refuses no kline types', () => {
    expect(() => batchKlineUnits(CODES, [], { batchKlineGroups: 10 })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION' }),
    );
  });
});
