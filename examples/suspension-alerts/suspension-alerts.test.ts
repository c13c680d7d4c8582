import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { main } from './src/main.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { 'example-token': 'basic' } });
});
afterAll(async () => {
  await sim.close();
});

it('alerts on the records of an exchange with their halt and resume instants, one query a minute at most', async () => {
  const alerts = await main({
    baseUrl: sim.url,
    token: 'example-token',
    plan: 'basic',
    exchanges: ['nyse'],
    emitInitial: true,
    durationMs: 3_000,
    onAlert: () => undefined,
  });
  expect(alerts.length).toBeGreaterThan(0);
  expect(alerts.every((a) => a.exchange === 'nyse' && a.change === 'new')).toBe(true);
  expect(alerts[0]!.text).toMatch(/^NEW nyse:\S+ halted/);
  expect(sim.log.count({ endpoint: 'suspension' })).toBe(1);
  expect(sim.log.refused()).toEqual([]);
});
