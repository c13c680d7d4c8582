import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildStaticInfoRequest, decodeStaticInfoData } from './static-info.js';
import { interpretRetResponse } from './ret-envelope.js';

const fixture = (name: string) => {
  const text = readFileSync(
    new URL(`../../../../test/fixtures/static-info/${name}`, import.meta.url),
    'utf8',
  );
  return interpretRetResponse('static-info', { status: 200, text }, undefined, []).data;
};

describe('static info', () => {
  it('builds the stock-family request with symbol_list', () => {
    const spec = buildStaticInfoRequest(['700.HK'], 'tr-s', 50);
    expect(spec.path).toBe('/quote-stock-b-api/static_info');
    expect(JSON.parse(spec.query['query']!)).toEqual({
      trace: 'tr-s',
      data: { symbol_list: [{ code: '700.HK' }] },
    });
  });

  it('decodes every field camelCased, absent, null and empty values as undefined', () => {
    const [hk, us] = decodeStaticInfoData(fixture('stocks.json'));
    expect(hk).toMatchObject({
      type: 'static-info',
      code: '700.HK',
      nameCn: '腾讯控股',
      lotSize: '100',
      epsTtm: '19.97',
    });
    expect(us).toMatchObject({
      code: 'AAPL.US',
      nameEn: 'Apple Inc.',
      eps: undefined,
      bps: undefined,
      hkShares: undefined,
    });
    expect(Object.keys(us!)).toEqual(Object.keys(hk!));
  });
});
