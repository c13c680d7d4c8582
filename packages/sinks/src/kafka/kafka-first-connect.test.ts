// With no broker at the address, both Kafka sinks fail within firstConnectTimeoutMs, naming the
// broker and the refused connection (before: silence for deliveryTimeoutMs, 120 s, then a bare
// timeout). A real refused TCP connection, on the real drivers.
import { describe, expect, it } from 'vitest';
import { KafkaKlineSink } from './kafka-kline-sink.js';
import { KafkaSink, KAFKA_DRIVERS } from './kafka-sink.js';
import { closedAddress } from '../../test-support/closed-address.js';

describe('a Kafka sink with no broker', () => {
  it.each(KAFKA_DRIVERS)(
    'KafkaSink (%s) fails its first write naming the broker and the refused connection',
    async (driver) => {
      const broker = await closedAddress();
      const sink = new KafkaSink({ brokers: broker, driver, firstConnectTimeoutMs: 1_500, lingerMs: 0 });
      try {
        const write = sink.write({
          type: 'depth',
          code: 'BTCUSDT',
          seq: 1n,
          tickTimeMs: 1,
          bids: [],
          asks: [],
        });
        // The sink's own bound, not the driver, gave up: said as such.
        await expect(write).rejects.toThrow(/not acknowledged by the broker: no connection to Kafka at /);
        await expect(write).rejects.toThrow(
          new RegExp(`${broker}.*firstConnectTimeoutMs.*${broker}: connect ECONNREFUSED`),
        );
      } finally {
        await sink.close().catch(() => undefined);
      }
    },
    30_000,
  );

  it('KafkaKlineSink.open rejects naming the broker and the refused connection', async () => {
    const broker = await closedAddress();
    const open = KafkaKlineSink.open({
      brokers: broker,
      topicPrefix: 'md',
      transactionalId: 'first-connect-test',
      firstConnectTimeoutMs: 1_500,
    });
    await expect(open).rejects.toThrow(
      new RegExp(`could not open on ${broker}.*connect ECONNREFUSED ${broker}`),
    );
  }, 30_000);

  it('refuses a firstConnectTimeoutMs that is not a positive integer', () => {
    expect(() => new KafkaSink({ brokers: '127.0.0.1:9092', firstConnectTimeoutMs: 0 })).toThrow(
      /firstConnectTimeoutMs/,
    );
  });
});
