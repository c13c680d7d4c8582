import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock } from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { consumeWithKafkajs, kafkaBrokers, uniquePrefix } from '../../test/support/kafka.js';
import { main } from './src/main.js';

// One clock for the simulator and the example's client: market time runs 60x, so books change often.
const SPEED = 60;
const clock = acceleratedClock({ speed: SPEED });
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { 'example-token': 'professional' }, clock });
});
afterAll(async () => {
  await sim.close();
});

it('produces every new depth tick to <prefix>.depth keyed by code, none repeated', async () => {
  const brokers = await kafkaBrokers();
  const topicPrefix = uniquePrefix('example-depth');
  const summary = await main({
    baseUrl: sim.url,
    token: 'example-token',
    plan: 'professional',
    brokers,
    topicPrefix,
    codes: ['BTCUSDT', 'ETHUSDT'],
    durationMs: 4_000 * SPEED, // 4 s of real time
    clock,
  });
  expect(summary.ticks).toBeGreaterThan(0);
  const topic = `${topicPrefix}.depth`;
  const read = await consumeWithKafkajs(brokers, [topic], summary.ticks);
  const messages = read.get(topic) ?? [];
  expect(messages).toHaveLength(summary.ticks);
  const seen = new Set<string>();
  for (const m of messages) {
    const value = JSON.parse(m.value) as { code: string; seq: string };
    expect(m.key).toBe(value.code);
    expect(seen.has(`${value.code}#${value.seq}`)).toBe(false);
    seen.add(`${value.code}#${value.seq}`);
  }
  expect(sim.log.refused()).toEqual([]);
});
