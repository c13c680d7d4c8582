import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DATASET_COLUMNS } from '../files/dataset-columns.js';
import { toKafkaMessage } from './to-kafka-message.js';

const update: BarUpdate = {
  type: 'bar-update',
  code: '700.HK',
  klineType: 2,
  tsMs: Date.UTC(2026, 0, 2, 1, 35),
  open: 1,
  high: 2,
  low: 0.5,
  close: 1.5,
  volume: null,
  turnover: 12.5,
  readAtMs: Date.UTC(2026, 0, 2, 1, 35, 30),
  receivedAtMs: Date.UTC(2026, 0, 2, 1, 35, 30, 120),
  final: false,
  revision: 3,
};
const bar: Bar = { ...update, type: 'bar', volume: 7 } as Bar;
const tick: DepthTick = {
  type: 'depth',
  code: 'BTCUSDT',
  seq: 18_446_744_073_709_551_615n,
  tickTimeMs: undefined,
  bids: [{ price: 1.5, volume: undefined, priceRaw: '1.5', volumeRaw: undefined }],
  asks: [{ price: 1.6, volume: 2, priceRaw: '1.6', volumeRaw: '2' }],
};
const halt: SuspensionRecord = {
  type: 'suspension',
  exchange: 'nasdaq',
  symbol: 'ABCD',
  symbolName: undefined,
  haltReason: 'LULD',
  haltDate: '2026-11-20',
  haltTime: '10:00:00',
  haltPeriod: undefined,
  haltDateTime: '2026-11-20 10:00:00',
  resumeDate: '2026-11-20',
  resumeTime: '10:05:00',
  resumeDateTime: '2026-11-20 10:05:00',
  sourceExchange: 'Q',
  pauseThresholdPrice: '12.34',
  publishDate: '2026-11-20 10:00:01',
  haltAtMs: Date.UTC(2026, 10, 20, 15),
  resumeAtMs: Date.UTC(2026, 10, 20, 15, 5),
  publishAtMs: Date.UTC(2026, 10, 20, 15, 0, 1),
};

describe('toKafkaMessage', () => {
  it('maps a forming bar to P.kline, keyed by code, with final false and ISO-8601 UTC ts and read_at', () => {
    const m = toKafkaMessage(update, 'md');
    expect(m.topic).toBe('md.kline');
    expect(m.key).toBe('700.HK');
    expect(m.value).toBe(
      '{"code":"700.HK","kline_type":2,"ts":"2026-01-02T01:35:00.000Z","open":1,"high":2,"low":0.5,"close":1.5,"volume":null,"turnover":12.5,"read_at":"2026-01-02T01:35:30.000Z","final":false}',
    );
  });

  it('maps a closed history bar as final, with when it was read (not when the answer arrived)', () => {
    expect(JSON.parse(toKafkaMessage(bar).value.toString())).toMatchObject({
      final: true,
      volume: 7,
      read_at: '2026-01-02T01:35:30.000Z',
    });
    expect(toKafkaMessage(bar).value).not.toContain('received');
    expect(toKafkaMessage(bar).topic).toBe('quoteflow.kline');
  });

  it('maps a depth tick with seq as a decimal string (all 64 bits) and absent values as null', () => {
    const m = toKafkaMessage(tick);
    expect(m.topic).toBe('quoteflow.depth');
    expect(m.key).toBe('BTCUSDT');
    expect(JSON.parse(m.value.toString())).toStrictEqual({
      code: 'BTCUSDT',
      seq: '18446744073709551615',
      tick_time: null,
      bids: [{ price: 1.5, volume: null }],
      asks: [{ price: 1.6, volume: 2 }],
    });
    expect(JSON.parse(toKafkaMessage({ ...tick, seq: undefined }).value.toString()).seq).toBeNull();
  });

  it('maps a suspension to P.suspension keyed by symbol, with the exchange and every raw field', () => {
    const m = toKafkaMessage(halt, 'p');
    expect(m.topic).toBe('p.suspension');
    expect(m.key).toBe('ABCD');
    expect(JSON.parse(m.value.toString())).toStrictEqual({
      exchange: 'nasdaq',
      symbol: 'ABCD',
      symbol_name: null,
      halt_at: '2026-11-20T15:00:00.000Z',
      resume_at: '2026-11-20T15:05:00.000Z',
      publish_date: '2026-11-20T15:00:01.000Z',
      halt_reason: 'LULD',
      raw_symbol: 'ABCD',
      raw_symbol_name: null,
      raw_halt_reason: 'LULD',
      raw_halt_date: '2026-11-20',
      raw_halt_time: '10:00:00',
      raw_halt_period: null,
      raw_halt_date_time: '2026-11-20 10:00:00',
      raw_resume_date: '2026-11-20',
      raw_resume_time: '10:05:00',
      raw_resume_date_time: '2026-11-20 10:05:00',
      raw_source_exchange: 'Q',
      raw_pause_threshold_price: '12.34',
      raw_publish_date: '2026-11-20 10:00:01',
    });
  });

  it("uses the datasets' column names plus the partition keys (and final for klines)", () => {
    const names = (kind: keyof typeof DATASET_COLUMNS) => DATASET_COLUMNS[kind].map((c) => c.name);
    expect(Object.keys(JSON.parse(toKafkaMessage(update).value.toString())).sort()).toEqual(
      [...names('kline'), 'kline_type', 'final'].sort(),
    );
    expect(Object.keys(JSON.parse(toKafkaMessage(tick).value.toString())).sort()).toEqual(
      names('depth').sort(),
    );
    expect(Object.keys(JSON.parse(toKafkaMessage(halt).value.toString())).sort()).toEqual(
      [...names('suspension'), 'exchange'].sort(),
    );
  });

  it('round-trips every depth tick: same keys always, values recoverable exactly', () => {
    const level = fc.record({
      price: fc.double({ noNaN: true, noDefaultInfinity: true }),
      volume: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true, min: 0 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.option(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { nil: undefined }),
        fc.option(fc.integer({ min: 0, max: 4_102_444_800_000 }), { nil: undefined }),
        fc.array(level, { maxLength: 5 }),
        fc.array(level, { maxLength: 5 }),
        (code, seq, tickTimeMs, bids, asks) => {
          const lv = (l: { price: number; volume: number | undefined }) => ({
            ...l,
            priceRaw: '',
            volumeRaw: undefined,
          });
          const t: DepthTick = {
            type: 'depth',
            code,
            seq,
            tickTimeMs,
            bids: bids.map(lv),
            asks: asks.map(lv),
          };
          const m = toKafkaMessage(t);
          expect(m.key).toBe(code);
          const v = JSON.parse(m.value.toString()) as Record<string, unknown>;
          expect(Object.keys(v)).toEqual(['code', 'seq', 'tick_time', 'bids', 'asks']);
          expect(v['code']).toBe(code);
          expect(v['seq'] === null ? undefined : BigInt(v['seq'] as string)).toBe(seq);
          expect(v['tick_time'] === null ? undefined : Date.parse(v['tick_time'] as string)).toBe(tickTimeMs);
          // -0 becomes 0 in JSON; everything else is exact.
          const back = (ls: { price: number; volume: number | null }[]) =>
            ls.map((l) => ({ price: l.price, volume: l.volume ?? undefined }));
          expect(back(v['bids'] as never)).toEqual(
            bids.map((l) => ({
              price: l.price + 0,
              volume: l.volume === undefined ? undefined : l.volume + 0,
            })),
          );
          expect(back(v['asks'] as never)).toEqual(
            asks.map((l) => ({
              price: l.price + 0,
              volume: l.volume === undefined ? undefined : l.volume + 0,
            })),
          );
        },
      ),
    );
  });
});
