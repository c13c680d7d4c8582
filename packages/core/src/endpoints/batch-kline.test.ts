import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { buildBatchKlineRequest, decodeBatchKlineData } from './batch-kline.js';
import { interpretRetResponse } from './ret-envelope.js';

const fixture = (name: string) => {
  const text = readFileSync(
    new URL(`../../../../test/fixtures/batch-kline/${name}`, import.meta.url),
    'utf8',
  );
  return interpretRetResponse('batch-kline', { status: 200, text }, undefined, []).data;
};
const STAMPS = { readAtMs: 1_700_000_100_000, receivedAtMs: 1_700_000_100_250 };

describe('buildBatchKlineRequest', () => {
  it('posts the groups as a JSON body and keeps the query string for the token alone', () => {
    const spec = buildBatchKlineRequest(
      [
        { code: 'AAPL.US', klineType: 1 },
        { code: 'AAPL.US', klineType: 8, count: 1 },
      ],
      'stock',
      'tr-b',
      100,
    );
    expect(spec).toMatchObject({
      method: 'POST',
      path: '/quote-stock-b-api/batch-kline',
      query: {},
      asked: ['AAPL.US:1', 'AAPL.US:8'],
    });
    expect(JSON.parse(spec.body!)).toEqual({
      trace: 'tr-b',
      data: {
        data_list: [
          { code: 'AAPL.US', kline_type: 1, kline_timestamp_end: 0, query_kline_num: 2, adjust_type: 0 },
          { code: 'AAPL.US', kline_type: 8, kline_timestamp_end: 0, query_kline_num: 1, adjust_type: 0 },
        ],
      },
    });
  });

  it('never builds a request over the group cap', () => {
    const groups = Array.from({ length: 11 }, (_, i) => ({ code: `C${i}`, klineType: 1 as const }));
    expect(() => buildBatchKlineRequest(groups, 'general', 't', 10)).toThrow(InvalidOptionError);
    expect(() => buildBatchKlineRequest(groups, 'general', 't', 10)).toThrow(/at most 10 groups.*got 11/);
  });

  it('refuses more than 2 bars per group', () => {
    expect(() =>
      buildBatchKlineRequest([{ code: 'X', klineType: 1, count: 3 as never }], 'general', 't', 10),
    ).toThrow(/count" must be 1 or 2/);
  });
});

describe('decodeBatchKlineData', () => {
  it('decodes each group with its bars oldest first, CFD volume 0 kept as 0', () => {
    const groups = decodeBatchKlineData(fixture('mixed-groups.json'), STAMPS);
    expect(groups.map((g) => [g.code, g.klineType, g.bars.length])).toEqual([
      ['AAPL.US', 1, 2],
      ['AAPL.US', 8, 2],
      ['US500', 1, 1],
    ]);
    expect(groups[0]!.bars[1]).toMatchObject({ tsMs: 1_700_000_100_000, close: 189.31, volume: 5100 });
    expect(groups[2]!.bars[0]).toMatchObject({ volume: 0, turnover: 0 });
    for (const b of groups.flatMap((g) => g.bars)) expect(b).toMatchObject(STAMPS);
  });

  it('names the group and bar of a bad value', () => {
    const data = {
      kline_list: [
        { code: 'A', kline_type: 1, kline_data: [] },
        {
          code: 'B',
          kline_type: 2,
          kline_data: [
            {
              timestamp: '1',
              open_price: '1',
              close_price: '1',
              high_price: 'x',
              low_price: '1',
              volume: '1',
              turnover: '1',
            },
          ],
        },
      ],
    };
    expect(() => decodeBatchKlineData(data, STAMPS)).toThrowError(
      expect.objectContaining({ path: 'data.kline_list[1].kline_data[0].high_price' }),
    );
  });
});
