import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildDepthTickRequest, decodeDepthTickData } from './depth-tick.js';
import { interpretRetResponse } from './ret-envelope.js';

const fixture = (name: string) => {
  const text = readFileSync(new URL(`../../../../test/fixtures/depth-tick/${name}`, import.meta.url), 'utf8');
  return interpretRetResponse('depth-tick', { status: 200, text }, undefined, []).data;
};

describe('buildDepthTickRequest', () => {
  it('lists the codes as symbol_list in the query JSON', () => {
    const spec = buildDepthTickRequest(['EURGBP', 'GOLD'], 'general', 'tr-d', 5);
    expect(spec).toMatchObject({ method: 'GET', path: '/quote-b-api/depth-tick', asked: ['EURGBP', 'GOLD'] });
    expect(JSON.parse(spec.query['query']!)).toEqual({
      trace: 'tr-d',
      data: { symbol_list: [{ code: 'EURGBP' }, { code: 'GOLD' }] },
    });
  });

  it('never builds a request with more codes than the plan allows', () => {
    expect(() => buildDepthTickRequest(['A', 'B', 'C', 'D', 'E', 'F'], 'general', 't', 5)).toThrow(
      /at most 5 codes.*got 6/,
    );
  });
});

describe('decodeDepthTickData', () => {
  it('decodes levels best first with numbers and the raw strings', () => {
    const [hk, us] = decodeDepthTickData(fixture('stocks.json'));
    expect(hk).toMatchObject({
      type: 'depth',
      code: '700.HK',
      seq: 30_686_349n,
      tickTimeMs: 1_677_830_357_227,
    });
    expect(hk!.bids[0]).toEqual({ price: 320.2, volume: 14_200, priceRaw: '320.200', volumeRaw: '14200' });
    expect(us!.asks[0]).toEqual({
      price: 151.04,
      volume: 100_000,
      priceRaw: '151.04',
      volumeRaw: '100000.00',
    });
  });

  it('keeps an empty book side as an empty list', () => {
    const [tick] = decodeDepthTickData(fixture('empty-side.json'));
    expect(tick!.asks).toEqual([]);
    expect(tick!.bids).toHaveLength(1);
  });

  it('gives undefined volume for a CFD that sends none', () => {
    const [tick] = decodeDepthTickData(fixture('cfd-no-volume.json'));
    expect(tick!.bids[0]).toEqual({
      price: 4500.1,
      volume: undefined,
      priceRaw: '4500.1',
      volumeRaw: undefined,
    });
    expect(tick!.asks[0]!.volume).toBeUndefined();
  });

  it('keeps a seq beyond 2^53 exact as a bigint', () => {
    const [tick] = decodeDepthTickData(fixture('huge-seq.json'));
    expect(tick!.seq).toBe(18_446_744_073_709_551_615n);
  });

  it('refuses a tick without a code and a malformed seq, naming the path', () => {
    expect(() => decodeDepthTickData({ tick_list: [{ seq: '1' }] })).toThrowError(
      expect.objectContaining({ path: 'data.tick_list[0].code' }),
    );
    expect(() => decodeDepthTickData({ tick_list: [{ code: 'A', seq: '1.5' }] })).toThrowError(
      expect.objectContaining({ path: 'data.tick_list[0].seq' }),
    );
    expect(() => decodeDepthTickData({ tick_list: [{ code: 'A', bids: [{ price: 'abc' }] }] })).toThrowError(
      expect.objectContaining({ path: 'data.tick_list[0].bids[0].price' }),
    );
  });
});
