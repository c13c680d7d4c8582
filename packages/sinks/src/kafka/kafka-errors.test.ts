import { QuoteflowError } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import { KafkaDeliveryError } from './kafka-delivery-error.js';
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
