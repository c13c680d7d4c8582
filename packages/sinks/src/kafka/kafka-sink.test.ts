import type { DepthTick, QuoteflowError } from '@quoteflow/core';
import { InvalidOptionError } from '@quoteflow/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeDriver, ackAll, settle } from '../../test-support/fake-driver.js';
import { KafkaDeliveryError } from './kafka-delivery-error.js';
import { KafkaSinkClosedError } from './kafka-sink-closed-error.js';
import { KafkaSink, type KafkaSinkOptions } from './kafka-sink.js';
import { toKafkaMessage } from './to-kafka-message.js';

const tick = (code: string, seq: number): DepthTick => ({
  type: 'depth',
  code,
  seq: BigInt(seq),
  tickTimeMs: 1_700_000_000_000 + seq,
  bids: [],
  asks: [],
});

function makeSink(options: Partial<KafkaSinkOptions> = {}): { sink: KafkaSink; driver: FakeDriver } {
  const driver = new FakeDriver();
  const sink = new KafkaSink({ brokers: '127.0.0.1:9092', driver: () => driver, lingerMs: 0, ...options });
  return { sink, driver };
}

/** Tracks whether a promise settled, and how. */
function track(p: Promise<void>): { state: 'pending' | 'resolved' | 'rejected'; error?: unknown } {
  const t: { state: 'pending' | 'resolved' | 'rejected'; error?: unknown } = { state: 'pending' };
  p.then(
    () => (t.state = 'resolved'),
    (error: unknown) => {
      t.state = 'rejected';
      t.error = error;
    },
  );
  return t;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('KafkaSink', () => {
  it('resolves a write only once the broker acknowledged its batch', async () => {
    const { sink, driver } = makeSink();
    const w = track(sink.write(tick('A', 1)));
    await settle();
    expect(driver.batches).toHaveLength(1);
    expect(w.state).toBe('pending');
    driver.batches[0]!.ack();
    await settle();
    expect(w.state).toBe('resolved');
    expect(sink.stats()).toMatchObject({ written: 1, acknowledged: 1, outstanding: 0, batches: 1 });
  });

  it('sends one batch at a time, in write order, up to maxBatchRecords each', async () => {
    const { sink, driver } = makeSink({ maxBatchRecords: 3, maxInFlightRecords: 100, lingerMs: 1_000 });
    const writes = Array.from({ length: 8 }, (_, i) => sink.write(tick(`C${i % 2}`, i)));
    await settle();
    expect(driver.batches).toHaveLength(1); // the rest waits for the first ack
    await ackAll(driver);
    await Promise.all(writes);
    expect(driver.maxInFlight).toBe(1);
    expect(driver.batches.map((b) => b.messages.length)).toEqual([3, 3, 2]);
    expect(driver.sent().map((m) => JSON.parse(m.value.toString()).seq)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
    ]);
  });

  it('caps a batch by maxBatchBytes (key + value + overhead), sending an oversized record alone', async () => {
    const { sink, driver } = makeSink({ maxBatchRecords: 100, maxBatchBytes: 300 });
    driver.autoAck = true;
    const size = toKafkaMessage(tick('AB', 1)).value.length + 2 + 32;
    expect(size).toBeLessThan(150);
    await Promise.all([1, 2, 3, 4, 5].map((i) => sink.write(tick('AB', i))));
    for (const b of driver.batches) {
      expect(
        b.messages.length === 1 ||
          b.messages.reduce((n, m) => n + m.key.length + m.value.length + 32, 0) <= 300,
      ).toBe(true);
    }
    expect(driver.sent()).toHaveLength(5);
  });

  it('waits lingerMs for a batch to fill before sending it', async () => {
    vi.useFakeTimers();
    const { sink, driver } = makeSink({ lingerMs: 50, maxBatchRecords: 10 });
    void sink.write(tick('A', 1));
    void sink.write(tick('A', 2));
    await settle();
    expect(driver.batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(49);
    expect(driver.batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(driver.batches).toHaveLength(1);
    expect(driver.batches[0]!.messages).toHaveLength(2);
  });

  it('sends a full batch at once, without waiting for lingerMs', async () => {
    vi.useFakeTimers();
    const { sink, driver } = makeSink({ lingerMs: 10_000, maxBatchRecords: 2 });
    void sink.write(tick('A', 1));
    void sink.write(tick('A', 2));
    await settle();
    expect(driver.batches).toHaveLength(1);
  });

  it('never has more than maxInFlightRecords unacknowledged; a full sink makes writers wait, first come first served', async () => {
    const { sink, driver } = makeSink({ maxInFlightRecords: 4, maxBatchRecords: 2, lingerMs: 1_000 });
    const writes = Array.from({ length: 10 }, (_, i) => track(sink.write(tick('K', i))));
    await settle();
    expect(sink.stats().outstanding).toBe(4);
    expect(driver.sent()).toHaveLength(2);
    while (driver.open.length > 0) {
      driver.open[0]!.ack();
      await settle();
      expect(sink.stats().outstanding).toBeLessThanOrEqual(4);
    }
    expect(writes.every((w) => w.state === 'resolved')).toBe(true);
    expect(sink.stats().maxOutstanding).toBe(4);
    expect(driver.sent().map((m) => Number(JSON.parse(m.value.toString()).seq))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  it('on a failed batch stops, rejects it, what is queued and what waits, and lists them all', async () => {
    const { sink, driver } = makeSink({ maxInFlightRecords: 4, maxBatchRecords: 2 });
    const writes = Array.from({ length: 6 }, (_, i) => track(sink.write(tick('F', i))));
    await settle();
    driver.batches[0]!.fail(new Error('broker on fire'));
    await settle();
    expect(writes.map((w) => w.state)).toEqual(Array(6).fill('rejected'));
    const err = writes[0]!.error as KafkaDeliveryError;
    expect(err).toBeInstanceOf(KafkaDeliveryError);
    expect(err.code).toBe('QF_KAFKA_DELIVERY');
    expect(err.message).toContain('broker on fire');
    expect(err.undelivered.map((m) => JSON.parse(m.value.toString()).seq)).toEqual(['0', '1', '2', '3']);
    // The two that were waiting for a slot are refused too, and counted.
    expect(sink.stats().undelivered).toBe(6);
    const later = track(sink.write(tick('F', 99)));
    await settle();
    expect(later.state).toBe('rejected');
    const closed = await sink.close().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(closed).toBeInstanceOf(KafkaDeliveryError);
    expect((closed as KafkaDeliveryError).message).toBe(
      'kafka: 7 records (quoteflow.depth ×7) not acknowledged by the broker: fake gave up: broker on fire',
    );
    expect((closed as KafkaDeliveryError).undelivered.map((m) => JSON.parse(m.value.toString()).seq)).toEqual(
      ['0', '1', '2', '3', '4', '5', '99'],
    );
    expect(driver.closes).toBe(1);
  });

  it('gives up on a batch not acknowledged within deliveryTimeoutMs', async () => {
    vi.useFakeTimers();
    const { sink } = makeSink({ deliveryTimeoutMs: 1_000 });
    const w = track(sink.write(tick('T', 1)));
    await vi.advanceTimersByTimeAsync(999);
    expect(w.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(w.state).toBe('rejected');
    expect((w.error as KafkaDeliveryError).message).toContain('deliveryTimeoutMs = 1000 ms');
  });

  it('fails the batch when the driver cannot connect', async () => {
    const { sink, driver } = makeSink();
    driver.connectError = new Error('ECONNREFUSED');
    await expect(sink.write(tick('X', 1))).rejects.toThrow(/ECONNREFUSED/);
  });

  it('close() flushes what is batched (no linger), waits for the acks, then disconnects', async () => {
    vi.useFakeTimers();
    const { sink, driver } = makeSink({ lingerMs: 60_000 });
    driver.autoAck = true;
    const w = track(sink.write(tick('A', 1)));
    const closing = track(sink.close());
    await vi.advanceTimersByTimeAsync(0);
    expect(w.state).toBe('resolved');
    expect(closing.state).toBe('resolved');
    expect(driver.closes).toBe(1);
    await sink.close(); // idempotent
    expect(driver.closes).toBe(1);
  });

  it('refuses writes after close() with QF_CLOSED', async () => {
    const { sink } = makeSink();
    await sink.close();
    const err = await sink.write(tick('A', 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KafkaSinkClosedError);
    expect((err as QuoteflowError).code).toBe('QF_CLOSED');
  });

  it('flush() resolves once everything written so far is acknowledged', async () => {
    const { sink, driver } = makeSink({ lingerMs: 1_000, maxBatchRecords: 10 });
    void sink.write(tick('A', 1));
    const f = track(sink.flush());
    await settle();
    expect(driver.batches).toHaveLength(1);
    expect(f.state).toBe('pending');
    driver.batches[0]!.ack();
    await settle();
    expect(f.state).toBe('resolved');
    await sink.close();
  });

  it('creates each topic once, before its first batch, with the configured partitions and replication', async () => {
    const { sink, driver } = makeSink({ partitions: 6, replicationFactor: 3, topicPrefix: 'md' });
    driver.autoAck = true;
    await sink.write(tick('A', 1));
    await sink.write(tick('B', 2));
    await sink.write({
      type: 'bar-update',
      code: 'A',
      klineType: 1,
      tsMs: 0,
      open: 1,
      high: 1,
      low: 1,
      close: 1,
      volume: 1,
      turnover: 1,
      readAtMs: 1_000,
      receivedAtMs: 1_050,
      final: false,
      revision: 0,
    });
    expect(driver.ensured).toEqual([
      [{ topic: 'md.depth', partitions: 6, replicationFactor: 3 }],
      [{ topic: 'md.kline', partitions: 6, replicationFactor: 3 }],
    ]);
    expect(driver.connects).toBe(1);
    await sink.close();
  });

  it('creates no topic when createTopics is false', async () => {
    const { sink, driver } = makeSink({ createTopics: false });
    driver.autoAck = true;
    await sink.write(tick('A', 1));
    expect(driver.ensured).toEqual([]);
    await sink.close();
  });

  it.each([
    ['brokers', { brokers: '' }],
    ['brokers', { brokers: 'localhost' }],
    ['compression', { compression: 'brotli' }],
    ['topicPrefix', { topicPrefix: 'a b' }],
    ['lingerMs', { lingerMs: -1 }],
    ['maxBatchRecords', { maxBatchRecords: 0 }],
    ['maxBatchBytes', { maxBatchBytes: 1.5 }],
    ['maxInFlightRecords', { maxInFlightRecords: 0 }],
    ['deliveryTimeoutMs', { deliveryTimeoutMs: 0 }],
    ['partitions', { partitions: 0 }],
    ['replicationFactor', { replicationFactor: -2 }],
    ['driver', { driver: 'librdkafka' }],
  ])('rejects a bad %s when built', (option, bad) => {
    const make = () =>
      new KafkaSink({ brokers: '127.0.0.1:9092', ...(bad as Partial<KafkaSinkOptions>) } as KafkaSinkOptions);
    expect(make).toThrow(InvalidOptionError);
    try {
      make();
    } catch (err) {
      expect((err as InvalidOptionError).option).toBe(option);
      expect((err as InvalidOptionError).code).toBe('QF_INVALID_OPTION');
    }
  });

  it('accepts brokers as a comma-separated string or an array, and builds the built-in drivers without connecting', async () => {
    for (const driver of ['kafkajs', 'platformatic'] as const) {
      const a = new KafkaSink({ brokers: '127.0.0.1:1, 127.0.0.1:2', driver });
      const b = new KafkaSink({ brokers: ['127.0.0.1:1'], driver, compression: 'zstd' });
      expect(a.driverName).toBe(driver);
      expect(b.driverName).toBe(driver);
      await a.close();
      await b.close();
    }
  });
});
