import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { main } from './src/main.js';

let sim: Simulator;
let out: string;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { 'example-token': 'premium' } });
  out = await mkdtemp(join(tmpdir(), 'qf-example-duckdb-'));
});
afterAll(async () => {
  await sim.close();
  await rm(out, { recursive: true, force: true });
});

it('reads the Parquet dataset with DuckDB: one row per code, 250 daily bars each, returns and volatility', async () => {
  const stats = await main({
    baseUrl: sim.url,
    token: 'example-token',
    plan: 'premium',
    out,
    codes: ['BTCUSDT', 'AAPL.US'],
  });
  expect(stats.map((s) => s.code)).toEqual(['AAPL.US', 'BTCUSDT']);
  for (const s of stats) {
    expect(s.days).toBe(250);
    expect(Number.isFinite(s.totalReturnPct)).toBe(true);
    expect(s.dailyVolPct).toBeGreaterThan(0);
  }
  expect(sim.log.refused()).toEqual([]);
});
