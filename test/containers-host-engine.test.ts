/**
 * The host engine keeps working whatever engine the run uses: Redis from `redis-server` and a
 * Kafka broker from the Maven Central jars (scripts/kafka/broker.sh), each with one round trip.
 */
import { Redis } from 'ioredis';
import kafkajs from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { consumeWithKafkajs, hostPrivateBroker, uniquePrefix, type PrivateBroker } from './support/kafka.js';
import { startHostRedisServer, type TestRedis } from './support/redis-server.js';

let redis: TestRedis | undefined;
let broker: PrivateBroker | undefined;

afterAll(async () => {
  await redis?.close();
  await broker?.dispose();
});

it('runs redis-server on the host: a value written is read back', async () => {
  redis = await startHostRedisServer();
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    await client.set('qf-host-engine', 'round trip');
    expect(await client.get('qf-host-engine')).toBe('round trip');
  } finally {
    client.disconnect();
  }
});

it('runs the Kafka broker from the jars on the host: a message produced is consumed', async () => {
  broker = await hostPrivateBroker();
  const topic = `${uniquePrefix('host-engine')}-t`;
  const kafka = new kafkajs.Kafka({
    clientId: 'qf-host-engine',
    brokers: [broker.brokers],
    logLevel: kafkajs.logLevel.NOTHING,
    // A broker just started on a loaded machine may take a while to lead its new partition: the
    // topic's creation waits for that (kafkajs asks again), up to about a minute.
    retry: { retries: 15, maxRetryTime: 5_000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'round trip' }] });
  await producer.disconnect();
  const read = await consumeWithKafkajs(broker.brokers, [topic], 1);
  expect(read.get(topic)?.map((m) => [m.key, m.value])).toEqual([['k', 'round trip']]);
});
