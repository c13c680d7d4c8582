import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactToken } from '../internal/redact-token.js';
import { decodeBatchKlineData } from './batch-kline.js';
import { decodeKlineData } from './kline.js';

const wireBar = (tsSec: number, price: number) => ({
  timestamp: String(tsSec),
  open_price: price.toFixed(4),
  close_price: price.toFixed(4),
  high_price: (price + 1).toFixed(4),
  low_price: price.toFixed(4),
  volume: '1',
  turnover: '2',
});
const STAMPS = { readAtMs: 1_700_000_100_000, receivedAtMs: 1_700_000_100_001 };

describe('decode properties', () => {
  it('turns any order of bars, with repeats, into strictly increasing unique bars', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }), {
          minLength: 0,
          maxLength: 40,
        }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.boolean(),
        (stamps, repeatIdx, reverse) => {
          const list = stamps.map((t) => wireBar(t, t / 1e7));
          for (const i of repeatIdx) if (list.length > 0) list.push(list[i % list.length]!);
          if (reverse) list.reverse();
          const { bars } = decodeKlineData({ code: 'BTCUSDT', kline_type: 1, kline_list: list }, STAMPS);
          expect(bars.map((b) => b.tsMs)).toEqual([...stamps].sort((a, b) => a - b).map((t) => t * 1000));
          for (const b of bars) expect(Number.isFinite(b.open) && Number.isFinite(b.close)).toBe(true);
        },
      ),
    );
  });

  it('names the exact group, bar and field of any single corrupted price', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.nat(),
        fc.constantFrom('open_price', 'close_price', 'high_price', 'low_price', 'timestamp'),
        fc.constantFrom('', 'abc', '1.2.3', 'NaN', '0x10', ' '),
        (groups, pick, field, bad) => {
          const data = {
            kline_list: Array.from({ length: groups }, (_, g) => ({
              code: `C${g}`,
              kline_type: 1,
              kline_data: [wireBar(1_700_000_000, 1), wireBar(1_700_000_060, 2)],
            })),
          };
          const g = pick % groups;
          const b = pick % 2;
          (data.kline_list[g]!.kline_data[b] as Record<string, string>)[field] = bad;
          expect(() => decodeBatchKlineData(data, STAMPS)).toThrowError(
            expect.objectContaining({
              code: 'QF_DECODE',
              path: `data.kline_list[${g}].kline_data[${b}].${field}`,
            }),
          );
        },
      ),
    );
  });

  it('never leaves a known token in a redacted text', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_-]{4,40}$/),
        fc.string(),
        fc.string(),
        (token, before, after) => {
          const text = `${before}http://h/p?token=${encodeURIComponent(token)}&query=x ${after} ${token}`;
          expect(redactToken(text, token)).not.toContain(token);
        },
      ),
    );
  });
});
