/**
 * The Kafka sink against a real Apache Kafka broker, with each driver: what is produced is read
 * back with a kafkajs consumer and with kcat (librdkafka), and checked for keys, partitions, order
 * per key and exact values, per the contract (shared/spec/contract.md, "Kafka").
 */
import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';
import { KafkaSink, KAFKA_DRIVERS, toKafka, type KafkaCompression, type KafkaRecord } from '@quoteflow/sinks';
import { toKafkaMessage } from '@quoteflow/sinks/internal';
import { from, lastValueFrom, tap, toArray } from 'rxjs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  consumeWithKafkajs,
  consumeWithKcat,
  javaPartitionOf,
  kafkaBrokers,
  partitionCount,
  uniquePrefix,
  type ReadMessage,
} from './support/kafka.js';

const CODES = [
  'AAPL.US',
  '700.HK',
  'BTCUSDT',
  '600519.SH',
  'EURUSD',
  'TSLA.US',
  '9988.HK',
  'ETHUSDT',
  'NVDA.US',
  'XAUUSD',
];
const T0 = Date.UTC(2026, 10, 20, 14, 30);

/** A deterministic mix of every record kind, several per code, with a per-code sequence. */
function records(perCode: number): KafkaRecord[] {
  const out: KafkaRecord[] = [];
  for (let i = 0; i < perCode; i++) {
    for (const [c, code] of CODES.entries()) {
      const tsMs = T0 + i * 60_000;
      const price = 100 + c + i / 100;
      const update: BarUpdate = {
        type: 'bar-update',
        code,
        klineType: 1,
        tsMs,
        open: price,
        high: price + 0.5,
        low: price - 0.25,
        close: price + 0.125,
        volume: i % 7 === 3 ? null : 1000 + i,
        turnover: i % 7 === 3 ? null : (1000 + i) * price,
        readAtMs: tsMs + 30_000,
        receivedAtMs: tsMs + 30_000 + c,
        final: i % 2 === 1,
        revision: i % 2,
      };
      out.push(update);
      const tick: DepthTick = {
        type: 'depth',
        code,
        seq: 9_007_199_254_740_993n + BigInt(i), // beyond 2^53: must survive as a string
        tickTimeMs: tsMs + 1234,
        bids: [{ price: price - 0.01, volume: 5, priceRaw: '', volumeRaw: '5' }],
        asks:
          i % 5 === 0
            ? []
            : [
                {
                  price: price + 0.01,
                  volume: c % 2 === 0 ? undefined : 7,
                  priceRaw: '',
                  volumeRaw: undefined,
                },
              ],
      };
      out.push(tick);
    }
    if (i % 10 === 0) {
      const bar: Bar = {
        type: 'bar',
        code: 'AAPL.US',
        klineType: 8,
        tsMs: Date.UTC(2026, 0, 1) + i * 86_400_000,
        open: 1,
        high: 2,
        low: 0.5,
        close: 1.5,
        volume: 10,
        turnover: 15,
        readAtMs: Date.UTC(2026, 0, 1) + (i + 1) * 86_400_000,
        receivedAtMs: Date.UTC(2026, 0, 1) + (i + 1) * 86_400_000 + 1,
      };
      out.push(bar);
      const halt: SuspensionRecord = {
        type: 'suspension',
        exchange: 'sse',
        symbol: `6000${String(i).padStart(2, '0')}`,
        symbolName: i % 20 === 0 ? '浦发银行' : undefined,
        haltReason: 'major event',
        haltDate: '2026-11-20',
        haltTime: '09:30:00',
        haltPeriod: 'all day',
        haltDateTime: undefined,
        resumeDate: undefined,
        resumeTime: undefined,
        resumeDateTime: undefined,
        sourceExchange: undefined,
        pauseThresholdPrice: undefined,
        publishDate: '2026-11-19 18:00:00',
        haltAtMs: Date.UTC(2026, 10, 20, 1, 30),
        resumeAtMs: undefined,
        publishAtMs: Date.UTC(2026, 10, 19, 10),
      };
      out.push(halt);
    }
  }
  return out;
}

/** Expected messages of one topic, grouped by key, in production order. */
function expectedByKey(input: KafkaRecord[], prefix: string, topic: string): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const r of input) {
    const m = toKafkaMessage(r, prefix);
    if (m.topic !== topic) continue;
    byKey.set(m.key, [...(byKey.get(m.key) ?? []), m.value.toString()]);
  }
  return byKey;
}

/** Checks what was read against what was produced: keys, one partition per key (Java's), order, values. */
function checkTopic(read: ReadMessage[], expected: Map<string, string[]>, partitions: number): void {
  const got = new Map<string, ReadMessage[]>();
  for (const m of read) got.set(m.key, [...(got.get(m.key) ?? []), m]);
  expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [key, values] of expected) {
    const msgs = got.get(key) ?? [];
    // One key, one partition: the one the Java client picks (murmur2), so other clients agree.
    expect(new Set(msgs.map((m) => m.partition))).toEqual(new Set([javaPartitionOf(key, partitions)]));
    // In production order, each exactly once.
    expect(msgs.map((m) => m.value)).toEqual(values);
  }
}

let brokers: string;
beforeAll(async () => {
  brokers = await kafkaBrokers();
});

describe.each(KAFKA_DRIVERS)('Kafka sink with the %s driver', (driver) => {
  it('produces every record kind to its topic, keyed by code, read back exactly by kafkajs and kcat', async () => {
    const prefix = uniquePrefix(`rt-${driver}`);
    const input = records(60);
    const sink = new KafkaSink({
      brokers,
      driver,
      topicPrefix: prefix,
      partitions: 3,
      replicationFactor: 1,
      maxBatchRecords: 97,
    });
    for (const r of input) void sink.write(r).catch(() => undefined);
    await sink.close();
    expect(sink.stats()).toMatchObject({ written: input.length, acknowledged: input.length, undelivered: 0 });

    const topics = (['kline', 'depth', 'suspension'] as const).map((kind) => `${prefix}.${kind}`);
    const viaKafkajs = await consumeWithKafkajs(brokers, topics, input.length);
    for (const topic of topics) {
      const expected = expectedByKey(input, prefix, topic);
      const total = [...expected.values()].reduce((n, v) => n + v.length, 0);
      expect(await partitionCount(brokers, topic)).toBe(3);
      const viaKcat = await consumeWithKcat(brokers, topic);
      expect(viaKafkajs.get(topic)).toHaveLength(total);
      expect(viaKcat).toHaveLength(total);
      checkTopic(viaKafkajs.get(topic)!, expected, 3);
      checkTopic(viaKcat, expected, 3);
      // Both readers see the same partitions and offsets.
      expect(viaKcat).toEqual(viaKafkajs.get(topic));
    }
  });

  it('writes the contract JSON: column names, partition keys, ISO-8601 UTC times (read_at too), seq as a string', async () => {
    const prefix = uniquePrefix(`json-${driver}`);
    const sink = new KafkaSink({ brokers, driver, topicPrefix: prefix, partitions: 1, replicationFactor: 1 });
    const input = records(1);
    const bar = input.find((r): r is BarUpdate => r.type === 'bar-update' && r.code === 'AAPL.US')!;
    const tick = input.find((r): r is DepthTick => r.type === 'depth' && r.code === 'BTCUSDT')!;
    const halt = input.find((r): r is SuspensionRecord => r.type === 'suspension')!;
    await Promise.all([sink.write(bar), sink.write(tick), sink.write(halt)]);
    await sink.close();
    const [k] = await consumeWithKcat(brokers, `${prefix}.kline`);
    const [d] = await consumeWithKcat(brokers, `${prefix}.depth`);
    const [s] = await consumeWithKcat(brokers, `${prefix}.suspension`);
    expect(k?.key).toBe('AAPL.US');
    expect(JSON.parse(k!.value)).toStrictEqual({
      code: 'AAPL.US',
      kline_type: 1,
      ts: '2026-11-20T14:30:00.000Z',
      open: 100,
      high: 100.5,
      low: 99.75,
      close: 100.125,
      volume: 1000,
      turnover: 100000,
      read_at: '2026-11-20T14:30:30.000Z',
      final: false,
    });
    expect(d?.key).toBe('BTCUSDT');
    expect(JSON.parse(d!.value)).toStrictEqual({
      code: 'BTCUSDT',
      seq: '9007199254740993',
      tick_time: '2026-11-20T14:30:01.234Z',
      bids: [{ price: 101.99, volume: 5 }],
      asks: [],
    });
    expect(s?.key).toBe('600000');
    expect(JSON.parse(s!.value)).toStrictEqual({
      exchange: 'sse',
      symbol: '600000',
      symbol_name: '浦发银行',
      halt_at: '2026-11-20T01:30:00.000Z',
      resume_at: null,
      publish_date: '2026-11-19T10:00:00.000Z',
      halt_reason: 'major event',
      raw_symbol: '600000',
      raw_symbol_name: '浦发银行',
      raw_halt_reason: 'major event',
      raw_halt_date: '2026-11-20',
      raw_halt_time: '09:30:00',
      raw_halt_period: 'all day',
      raw_halt_date_time: null,
      raw_resume_date: null,
      raw_resume_time: null,
      raw_resume_date_time: null,
      raw_source_exchange: null,
      raw_pause_threshold_price: null,
      raw_publish_date: '2026-11-19 18:00:00',
    });
  });

  it('compresses with gzip, snappy, lz4 and zstd, readable by kcat and kafkajs', async () => {
    const codecs: KafkaCompression[] = ['gzip', 'snappy', 'lz4', 'zstd'];
    const input = records(20).filter((r) => r.type === 'depth');
    const prefixes = codecs.map((c) => uniquePrefix(`${c}-${driver}`));
    await Promise.all(
      codecs.map(async (compression, i) => {
        const sink = new KafkaSink({
          brokers,
          driver,
          compression,
          topicPrefix: prefixes[i]!,
          partitions: 2,
          replicationFactor: 1,
        });
        await Promise.all(input.map((r) => sink.write(r)));
        await sink.close();
      }),
    );
    const topics = prefixes.map((p) => `${p}.depth`);
    const viaKafkajs = await consumeWithKafkajs(brokers, topics, input.length * codecs.length);
    for (const [i, topic] of topics.entries()) {
      const expected = expectedByKey(input, prefixes[i]!, topic);
      checkTopic(await consumeWithKcat(brokers, topic), expected, 2);
      checkTopic(viaKafkajs.get(topic)!, expected, 2);
    }
  });

  it('toKafka emits each record only after the broker acknowledged it, in order, within the in-flight bound', async () => {
    const prefix = uniquePrefix(`op-${driver}`);
    const input = records(100);
    const sink = new KafkaSink({
      brokers,
      driver,
      topicPrefix: prefix,
      partitions: 3,
      replicationFactor: 1,
      maxInFlightRecords: 64,
      maxBatchRecords: 16,
    });
    let emitted = 0;
    const out = await lastValueFrom(
      from(input).pipe(
        toKafka(sink),
        tap(() => {
          emitted++;
          // Never ahead of the broker's acknowledgements.
          expect(sink.stats().acknowledged).toBeGreaterThanOrEqual(emitted);
        }),
        toArray(),
      ),
    );
    await sink.close();
    expect(out).toEqual(input);
    expect(sink.stats().maxOutstanding).toBeLessThanOrEqual(64);
    expect(sink.stats().batches).toBeGreaterThanOrEqual(Math.ceil(input.length / 16));
    const topic = `${prefix}.kline`;
    const expected = expectedByKey(input, prefix, topic);
    const total = [...expected.values()].reduce((n, v) => n + v.length, 0);
    checkTopic(await consumeWithKcat(brokers, topic), expected, 3);
    expect(total).toBe(input.filter((r) => r.type === 'bar-update' || r.type === 'bar').length);
  });
});

it('the two drivers put a key on the same partition', async () => {
  const input = records(5).filter((r) => r.type === 'depth');
  const reads: ReadMessage[][] = [];
  for (const driver of KAFKA_DRIVERS) {
    const prefix = uniquePrefix(`same-${driver}`);
    const sink = new KafkaSink({ brokers, driver, topicPrefix: prefix, partitions: 5, replicationFactor: 1 });
    await Promise.all(input.map((r) => sink.write(r)));
    await sink.close();
    reads.push(await consumeWithKcat(brokers, `${prefix}.depth`));
  }
  const [a, b] = reads;
  expect(a).toHaveLength(input.length);
  expect(b).toEqual(a);
});
