import { describe, expect, it } from 'vitest';
import { isProducerFencedError } from './kafka-transactional-driver.js';

describe('isProducerFencedError', () => {
  it.each([
    ['kafkajs', Object.assign(new Error('old epoch'), { type: 'INVALID_PRODUCER_EPOCH' }), true],
    ['kafkajs, newer broker', Object.assign(new Error('fenced'), { type: 'PRODUCER_FENCED' }), true],
    [
      '@platformatic/kafka, nested',
      new AggregateError([Object.assign(new Error('x'), { apiId: 'PRODUCER_FENCED' })], 'Producing failed'),
      true,
    ],
    ['in a cause', new Error('sink', { cause: { type: 'INVALID_PRODUCER_ID_MAPPING' } }), true],
    ['kafkajs retries exceeded', { originalError: { type: 'INVALID_PRODUCER_EPOCH' } }, true],
    ['another broker error', Object.assign(new Error('x'), { type: 'NOT_LEADER_OR_FOLLOWER' }), false],
    ['no error at all', undefined, false],
  ])('%s: %s', (_what, err, fenced) => {
    expect(isProducerFencedError(err)).toBe(fenced);
  });
});
