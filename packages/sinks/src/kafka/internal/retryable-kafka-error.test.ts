import { describe, expect, it } from 'vitest';
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import { isRetryableKafkaError } from './retryable-kafka-error.js';
import { OperationTimeout } from './with-timeout.js';

const named = (name: string, fields: Record<string, unknown> = {}): Error =>
  Object.assign(new Error(name), { name, ...fields });

describe('isRetryableKafkaError', () => {
  it.each([
    [
      'kafkajs: no transaction coordinator',
      named('KafkaJSGroupCoordinatorNotFound', { retriable: false }),
      true,
    ],
    ['kafkajs: connection closed', named('KafkaJSConnectionClosedError'), true],
    ['kafkajs: request timed out', named('KafkaJSRequestTimeoutError'), true],
    [
      'kafkajs: retries exceeded on CONCURRENT_TRANSACTIONS',
      named('KafkaJSNumberOfRetriesExceeded', {
        cause: named('KafkaJSProtocolError', { type: 'CONCURRENT_TRANSACTIONS' }),
      }),
      true,
    ],
    ['broker: NOT_COORDINATOR', named('KafkaJSProtocolError', { type: 'NOT_COORDINATOR' }), true],
    [
      'broker: coordinator loading',
      named('KafkaJSProtocolError', { type: 'COORDINATOR_LOAD_IN_PROGRESS' }),
      true,
    ],
    [
      '@platformatic/kafka: a response with COORDINATOR_NOT_AVAILABLE',
      new AggregateError([Object.assign(new Error('x'), { apiId: 'COORDINATOR_NOT_AVAILABLE' })], 'response'),
      true,
    ],
    [
      '@platformatic/kafka: network error',
      Object.assign(new Error('socket'), { code: 'PLT_KFK_NETWORK' }),
      true,
    ],
    ['a socket reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    ['an attempt without an answer in time', new OperationTimeout('no answer'), true],
    [
      'the watermark topic unreadable for now',
      new KafkaKlineSinkError('QF_KAFKA_WATERMARKS', 'could not read', { retryable: true }),
      true,
    ],
    ['fenced (kafkajs)', named('KafkaJSProtocolError', { type: 'INVALID_PRODUCER_EPOCH' }), false],
    [
      'fenced, in a retryable wrapper',
      named('KafkaJSNumberOfRetriesExceeded', {
        cause: named('KafkaJSProtocolError', { type: 'PRODUCER_FENCED' }),
      }),
      false,
    ],
    ['fenced (a sink error)', new KafkaKlineSinkError('QF_FENCED', 'another producer'), false],
    [
      'transactional id not authorized',
      named('KafkaJSProtocolError', { type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', retriable: false }),
      false,
    ],
    [
      'topic not authorized behind a network error',
      Object.assign(new Error('x', { cause: { apiId: 'TOPIC_AUTHORIZATION_FAILED' } }), {
        code: 'ECONNRESET',
      }),
      false,
    ],
    ['SASL authentication', named('KafkaJSSASLAuthenticationError'), false],
    [
      '@platformatic/kafka: authentication',
      Object.assign(new Error('auth'), { code: 'PLT_KFK_AUTHENTICATION' }),
      false,
    ],
    [
      'a malformed watermark record',
      new KafkaKlineSinkError('QF_KAFKA_WATERMARKS', 'not a watermark', { retryable: false }),
      false,
    ],
    ['an invalid transaction state', named('KafkaJSProtocolError', { type: 'INVALID_TXN_STATE' }), false],
    ['a bug', new TypeError('x is undefined'), false],
    ['no error at all', undefined, false],
  ])('%s', (_what, err, retryable) => {
    expect(isRetryableKafkaError(err)).toBe(retryable);
  });
});
