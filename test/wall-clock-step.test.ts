/**
 * Waits for Kafka run their deadlines on the monotonic clock (core's `retryWithBudget` on
 * `monotonicClock`): a step of the wall clock during a wait (NTP, an operator, a VM resynced
 * after a pause) moves no deadline. The test steps `Date.now()` by hours just after the wait
 * started, while `performance.now()`, the monotonic clock, runs on; a wait that counted on the
 * wall clock gives up at once (a step forward) or never (a step back).
 */
import { checkKafkaCluster, KafkajsDriver, type KafkaClusterError } from '@quoteflow/sinks/internal';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  kafkajsClientConfig,
  kafkajsProducerConfig,
} from '../packages/sinks/src/kafka/internal/kafkajs-config.js';
import { kafkaBrokers, uniquePrefix } from './support/kafka.js';
import { stalledListener, type StalledListener } from './support/stalled-listener.js';

const HOURS_3 = 3 * 3_600_000;

/** From now on, `Date.now()` reads `byMs` off the real wall clock; `performance.now()` is untouched. */
function stepWallClock(byMs: number): { restore(): void } {
  const real = Date.now.bind(Date);
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + byMs);
  return { restore: () => spy.mockRestore() };
}

/** `promise`'s rejection, with the wall clock stepped by `byMs` once `start` has begun its wait. */
async function rejectionWithStep(start: () => Promise<unknown>, byMs: number): Promise<unknown> {
  const waiting = start(); // its deadline is taken here, before the step
  const step = stepWallClock(byMs);
  try {
    return await waiting.then(
      () => new Error('expected a rejection'),
      (e: unknown) => e,
    );
  } finally {
    step.restore();
  }
}

describe('a step of the wall clock during a wait for Kafka', () => {
  /** A listener that accepts connections and never answers (a broker that stalls). */
  let stalled: StalledListener;
  beforeAll(async () => {
    stalled = await stalledListener();
  });
  afterAll(() => stalled.close());

  it('three hours ahead: checkKafkaCluster still waits out its 3 s of refused connections before naming them', async () => {
    const err = (await rejectionWithStep(
      () =>
        checkKafkaCluster({ brokers: ['127.0.0.1:1'], topics: [], createTopics: false, timeoutMs: 30_000 }),
      HOURS_3,
    )) as KafkaClusterError;
    expect(err).toMatchObject({ code: 'QF_KAFKA_CLUSTER', kind: 'unreachable' });
    expect(err.message).toContain('no Kafka broker takes connections: 127.0.0.1:1: connect ECONNREFUSED');
  });

  it('three hours back: checkKafkaCluster of a stalling broker still ends at its timeout', async () => {
    const err = (await rejectionWithStep(
      () =>
        checkKafkaCluster({ brokers: [stalled.address], topics: [], createTopics: false, timeoutMs: 2_000 }),
      -HOURS_3,
    )) as KafkaClusterError;
    expect(err).toMatchObject({ code: 'QF_KAFKA_CLUSTER', kind: 'timeout' });
    expect(err.message).toContain(`Kafka at ${stalled.address} did not answer in time`);
  });

  it('three hours back: a read of a topic a transaction holds open still ends at its wait', async () => {
    const brokers = await kafkaBrokers();
    const prefix = uniquePrefix('wall-step');
    const topic = `${prefix}.watermarks`;
    const options = {
      brokers: brokers.split(','),
      clientId: 'qft-wall-step',
      compression: 'none' as const,
      requestTimeoutMs: 30_000,
      retryMaxDelayMs: 500,
      connectTimeoutMs: 5_000,
      deliveryTimeoutMs: 30_000,
    };
    const kafka = new kafkajs.Kafka(kafkajsClientConfig(options));
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer(
      kafkajsProducerConfig({ ...options, transactionalId: `${prefix}-open`, transactionTimeoutMs: 60_000 }),
    );
    await producer.connect();
    const open = await producer.transaction();
    await open.send({ topic, messages: [{ key: 'k', value: 'v' }] });
    const reader = new KafkajsDriver(options);
    try {
      const err = await rejectionWithStep(() => reader.readCommitted(topic, 1_500), -HOURS_3);
      expect(err).toMatchObject({ code: 'QF_KAFKA_WATERMARKS', retryable: true });
      expect((err as Error).message).toContain(
        `${topic} partition 0 on ${brokers} still holds a transaction open after 1500 ms`,
      );
    } finally {
      await open.abort();
      await Promise.all([producer.disconnect(), reader.close()]);
    }
  });
});
