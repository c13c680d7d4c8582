import { QuoteflowError } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import { KafkaDeliveryError } from './kafka-delivery-error.js';
import {
  KafkaKlineSinkError,
  KAFKA_KLINE_SINK_ERROR_CODES,
  klineSinkFailure,
} from './kafka-kline-sink-error.js';
import { KafkaSinkClosedError } from './kafka-sink-closed-error.js';

describe('Kafka sink errors', () => {
  it.each([
    [
      new KafkaDeliveryError([{ topic: 't.depth', key: 'A', value: '{}' }], 'gone'),
      'KafkaDeliveryError',
      'QF_KAFKA_DELIVERY',
      false,
    ],
    [new KafkaSinkClosedError(), 'KafkaSinkClosedError', 'QF_CLOSED', false],
  ] as const)('%s has a stable name, code and retry verdict', (err, name, code, retryable) => {
    expect(err).toBeInstanceOf(QuoteflowError);
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(retryable);
  });

  it.each(KAFKA_KLINE_SINK_ERROR_CODES.map((code) => [code]))(
    'KafkaKlineSinkError %s has a stable name and code',
    (code) => {
      const err = new KafkaKlineSinkError(code, 'm', { retryable: code === 'QF_KAFKA_TRANSACTION' });
      expect(err.name).toBe('KafkaKlineSinkError');
      expect(err.code).toBe(code);
      expect(err.retryable).toBe(code === 'QF_KAFKA_TRANSACTION');
    },
  );

  it('tells a fenced producer from a failed transaction and from an at-least-once delivery failure', () => {
    const sink = {
      name: 'kafka md.kline (exactly-once)',
      exactlyOnce: true,
      transactionalId: 'w1',
      transactionTimeoutMs: 60_000,
      brokers: ['127.0.0.1:9092', '127.0.0.1:9093'],
    };
    const fenced = klineSinkFailure(
      Object.assign(new Error('old epoch'), { type: 'INVALID_PRODUCER_EPOCH' }),
      sink,
    );
    expect([fenced.code, fenced.retryable]).toEqual(['QF_FENCED', false]);
    expect(fenced.message).toContain('another producer took transactional id "w1"');
    const failed = klineSinkFailure(new Error('broker gone'), sink);
    expect([failed.code, failed.retryable]).toEqual(['QF_KAFKA_TRANSACTION', true]);
    expect(failed.message).toBe(
      'kafka md.kline (exactly-once) on 127.0.0.1:9092,127.0.0.1:9093: the transaction was not committed: broker gone; open the sink again to resume from its committed watermarks',
    );
    const alo = klineSinkFailure(Object.assign(new Error('old epoch'), { type: 'INVALID_PRODUCER_EPOCH' }), {
      ...sink,
      exactlyOnce: false,
    });
    expect(alo.code).toBe('QF_KAFKA_DELIVERY');
  });

  it('says how many records of which topics were not delivered, and why', () => {
    const m = (topic: string) => ({ topic, key: 'k', value: 'v' });
    const err = new KafkaDeliveryError(
      [m('p.kline'), m('p.depth'), m('p.kline')],
      'broker gone',
      new Error('ECONNREFUSED'),
    );
    expect(err.message).toBe(
      'kafka: 3 records (p.kline ×2, p.depth ×1) not acknowledged by the broker: broker gone',
    );
    expect((err.cause as Error).message).toBe('ECONNREFUSED');
  });
});
