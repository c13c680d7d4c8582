import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonFloat } from './ndjson-rows.js';

describe('jsonFloat', () => {
  it.each([
    [18, '18.0'],
    [0, '0.0'],
    [-0, '-0.0'],
    [-3, '-3.0'],
    [18.87977, '18.87977'],
    [2 ** 53, '9007199254740992.0'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    [NaN, 'null'],
    [Infinity, 'null'],
  ])('writes %s as %s', (v, text) => {
    expect(jsonFloat(v)).toBe(text);
  });

  it('parses back to the same double for every finite value', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        expect(Object.is(JSON.parse(jsonFloat(v)), v)).toBe(true);
      }),
    );
  });
});
