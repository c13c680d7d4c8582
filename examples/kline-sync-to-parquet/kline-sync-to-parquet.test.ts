import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock } from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { main } from './src/main.js';

// One clock for the simulator and the example's client and pipeline: a 1-minute bar closes every 2 s.
const SPEED = 30;
const clock = acceleratedClock({ speed: SPEED });
let sim: Simulator;
let out: string;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { 'example-token': 'professional' }, clock });
  out = await mkdtemp(join(tmpdir(), 'qf-example-kline-'));
});
afterAll(async () => {
  await sim.close();
  await rm(out, { recursive: true, force: true });
});

it('syncs history and live bars into Parquet files and continues after a restart', async () => {
  const opts = {
    baseUrl: sim.url,
    token: 'example-token',
    plan: 'professional' as const,
    out,
    codes: ['BTCUSDT'],
    klineTypes: [1 as const],
    durationMs: 5_000 * SPEED, // 5 s of real time
    checkpointMs: 2_000 * SPEED,
    clock,
  };
  const first = await main(opts);
  expect(first.closedBars).toBeGreaterThanOrEqual(200);
  const second = await main(opts);
  // The second run only adds bars that closed since (no history again).
  expect(second.closedBars).toBeLessThan(100);
  expect(second.closedBars).toBeGreaterThan(0);
  const files = await readdir(join(out, 'kline', 'kline_type=1'), { recursive: true });
  expect(files.some((f) => String(f).endsWith('.parquet'))).toBe(true);
  expect(sim.log.refused()).toEqual([]);
});
