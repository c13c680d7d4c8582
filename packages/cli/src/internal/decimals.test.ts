import { describe, expect, it } from 'vitest';
import { decimalsOf, roundLikeInputs } from './decimals.js';

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
