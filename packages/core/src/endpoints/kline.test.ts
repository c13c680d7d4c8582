import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DecodeError, InvalidOptionError } from '../errors.js';
import { buildKlineRequest, decodeKlineData } from './kline.js';
import { interpretRetResponse } from './ret-envelope.js';

const fixture = (name: string) => {
  const text = readFileSync(new URL(`../../../../test/fixtures/kline/${name}`, import.meta.url), 'utf8');
  return interpretRetResponse('kline', { status: 200, text }, undefined, []).data;
};
const STAMPS = { readAtMs: 1_700_000_100_000, receivedAtMs: 1_700_000_100_250 };

describe('buildKlineRequest', () => {
  it('puts the spec query JSON, with the trace, in the query parameter of the family path', () => {
    const spec = buildKlineRequest(
      { code: 'BTCUSDT', klineType: 1, count: 500, endMs: 1_700_000_060_500 },
      'general',
      'tr-1',
    );
    expect(spec).toMatchObject({
      endpoint: 'kline',
      method: 'GET',
      path: '/quote-b-api/kline',
      body: undefined,
      trace: 'tr-1',
    });
    expect(JSON.parse(spec.query['query']!)).toEqual({
      trace: 'tr-1',
      data: {
        code: 'BTCUSDT',
        kline_type: 1,
        kline_timestamp_end: 1_700_000_060,
        query_kline_num: 500,
        adjust_type: 0,
      },
    });
  });

  it('sends kline_timestamp_end 0 when no end is given', () => {
    const spec = buildKlineRequest({ code: 'AAPL.US', klineType: 8, count: 2 }, 'stock', 't');
    expect(spec.path).toBe('/quote-stock-b-api/kline');
    expect(JSON.parse(spec.query['query']!).data.kline_timestamp_end).toBe(0);
  });

  it.each([
    [{ count: 501 }, 'count', /1 to 500/],
    [{ count: 0 }, 'count', /got 0/],
    [{ klineType: 11 }, 'klineType', /1 to 10, got 11/],
    [{ code: '' }, 'code', /non-empty/],
    [{ endMs: -5 }, 'endMs', /got -5/],
  ])('refuses %j before building anything, naming the option', (patch, option, message) => {
    const q = { code: 'BTCUSDT', klineType: 1 as const, count: 10, ...patch };
    const err = (() => {
      try {
        buildKlineRequest(q as never, 'general', 't');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as InvalidOptionError).option).toBe(option);
    expect((err as Error).message).toMatch(message);
  });
});

describe('decodeKlineData', () => {
  it('decodes the provider sample: seconds to ms, decimal strings to numbers, oldest first', () => {
    const r = decodeKlineData(fixture('aapl-daily.json'), STAMPS);
    expect(r.code).toBe('AAPL.US');
    expect(r.klineType).toBe(8);
    expect(r.bars).toHaveLength(3);
    expect(r.bars[2]).toEqual({
      type: 'bar',
      code: 'AAPL.US',
      klineType: 8,
      tsMs: 1_677_829_200_000,
      open: 148.045,
      high: 151.11,
      low: 147.33,
      close: 151.03,
      volume: 58_505_200,
      turnover: 8_808_410_100,
      readAtMs: 1_700_000_100_000,
      receivedAtMs: 1_700_000_100_250,
    });
  });

  it('stamps every bar of the answer with the instants it was asked for and arrived', () => {
    const r = decodeKlineData(fixture('newest-first-repeated.json'), STAMPS);
    for (const b of r.bars) expect(b).toMatchObject(STAMPS);
  });

  it('sorts newest-first bars and drops the repeats', () => {
    const r = decodeKlineData(fixture('newest-first-repeated.json'), STAMPS);
    expect(r.bars.map((b) => b.tsMs)).toEqual([1_700_000_000_000, 1_700_000_060_000, 1_700_000_120_000]);
  });

  it('turns an empty volume and turnover into null, never NaN', () => {
    const r = decodeKlineData(fixture('empty-volume.json'), STAMPS);
    expect(r.bars[0]).toMatchObject({ volume: null, turnover: null, open: 320.2 });
    expect(r.bars[1]).toMatchObject({ volume: 120_300, turnover: 38_590_000.5 });
  });

  it('tolerates timestamps already in milliseconds', () => {
    const r = decodeKlineData(fixture('timestamps-in-ms.json'), STAMPS);
    expect(r.bars.map((b) => b.tsMs)).toEqual([1_700_000_100_000, 1_700_000_400_000]);
    expect(r.bars[0]!.volume).toBe(0);
  });

  it('rejects a non-numeric price with a decode error naming the path', () => {
    expect(() => decodeKlineData(fixture('non-numeric-price.json'), STAMPS)).toThrowError(
      expect.objectContaining({ code: 'QF_DECODE', path: 'data.kline_list[1].close_price', retryable: true }),
    );
  });

  it('names the path of a missing field', () => {
    const err = (() => {
      try {
        decodeKlineData({ code: 'X', kline_type: 1, kline_list: [{ timestamp: '1' }] }, STAMPS);
      } catch (e) {
        return e as DecodeError;
      }
    })();
    expect(err).toBeInstanceOf(DecodeError);
    expect(err?.path).toBe('data.kline_list[0].open_price');
  });
});
