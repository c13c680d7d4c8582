import { describe, expect, it } from 'vitest';
import { DecimalsSeen, decimalsOf, roundLikeInputs } from './decimals.js';

describe('decimalsOf', () => {
  it('counts the digits after the point of the shortest form, exponents included', () => {
    expect([12, 1.25, 0.1, 1e-7, 1.5e-8, 2e21].map(decimalsOf)).toEqual([0, 2, 1, 7, 9, 0]);
  });
});

describe('roundLikeInputs', () => {
  it('gives a difference the decimals its inputs had, without float noise', () => {
    expect(153.45 - 147.25).not.toBe(6.2);
    expect(roundLikeInputs(153.45 - 147.25, 153.45, 147.25)).toBe(6.2);
    expect(roundLikeInputs(1.08951 - 1.0887, 1.08951, 1.0887)).toBe(0.00081);
    expect(roundLikeInputs(101 - 99, 101, 99)).toBe(2);
  });
});

describe('DecimalsSeen', () => {
  it('rounds a sum to the most decimals seen under its key, each key on its own', () => {
    const seen = new DecimalsSeen();
    const volumes = [10.1, 20.2, 30.3];
    for (const v of volumes) seen.see('BTCUSDT|volume', v);
    seen.see('BTCUSDT|turnover', 12.5);
    seen.see('BTCUSDT|turnover', null);
    const sum = volumes.reduce((s, v) => s + v, 0);
    expect(sum).toBe(60.599999999999994);
    expect(seen.round('BTCUSDT|volume', sum)).toBe(60.6);
    expect(seen.round('BTCUSDT|turnover', 12.5 + 0.25)).toBe(12.8); // 1 decimal seen there
    expect(seen.round('ETHUSDT|volume', 2.4)).toBe(2); // nothing seen: whole numbers
    expect(seen.round('BTCUSDT|volume', null)).toBeNull();
  });
});
