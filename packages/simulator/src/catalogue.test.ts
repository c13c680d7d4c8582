import { describe, expect, it } from 'vitest';
import { defaultCatalogue, SIM_PRODUCT_CLASSES, syntheticCatalogue } from './catalogue.js';
import { parseTokenSpecs } from './parse-token-specs.js';

describe('defaultCatalogue', () => {
  const products = defaultCatalogue();
  it('holds every example code of provider-facts.md, with its exact case', () => {
    const codes = new Set(products.map((p) => p.code));
    for (const code of [
      'AAPL.US',
      'GOOGL.US',
      'UNH.US',
      '700.HK',
      '857.HK',
      '600416.SH',
      '000627.SZ',
      'BTCUSDT',
      'ETHUSDT',
      'AUDUSD',
      'EURGBP',
      'GOLD',
      'Silver',
      'USOIL',
      'UKOIL',
      'US30',
      'NAS100',
    ]) {
      expect(codes).toContain(code);
    }
    expect(codes).not.toContain('SILVER');
  });

  it('has products of every class, stock-suffixed codes on the stock family only', () => {
    expect(new Set(products.map((p) => p.productClass))).toEqual(new Set(SIM_PRODUCT_CLASSES));
    for (const p of products) expect(p.family === 'stock').toBe(/\.(US|HK|SH|SZ)$/.test(p.code));
    expect(new Set(products.map((p) => p.code)).size).toBe(products.length);
  });
});

describe('syntheticCatalogue', () => {
  it('generates distinct codes that do not collide with the default catalogue', () => {
    const synth = syntheticCatalogue({ count: 10_000 });
    const codes = new Set(synth.map((p) => p.code));
    expect(codes.size).toBe(10_000);
    for (const p of defaultCatalogue()) expect(codes.has(p.code)).toBe(false);
  });

  it('rejects a bad count, naming the option', () => {
    expect(() => syntheticCatalogue({ count: -1 })).toThrow(/"count"/);
  });
});

describe('parseTokenSpecs', () => {
  it('maps TOKEN:PLAN values and defaults to demo on professional', () => {
    expect(parseTokenSpecs([])).toEqual({ demo: 'professional' });
    expect(parseTokenSpecs(['a:basic', 'b:all-hk', 'c'])).toEqual({
      a: 'basic',
      b: 'all-hk',
      c: 'professional',
    });
  });

  it('rejects an unknown plan without echoing the token', () => {
    expect(() => parseTokenSpecs(['s3cret:gold'])).toThrow(/gold/);
    expect(() => parseTokenSpecs(['s3cret:gold'])).not.toThrow(/s3cret/);
  });
});
