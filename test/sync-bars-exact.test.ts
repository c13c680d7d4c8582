/**
 * `sync --bars N` writes the N most recent closed bars, as `backfill --bars N` does, also when the
 * market is closed and the N + 1 bars read are all closed (it wrote N + 1). The simulator's market
 * stands on a Saturday a week ago (an accelerated clock at speed 1 from there), so from the CLI's
 * clock every bar it serves is closed, whatever day the test runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock } from '@quoteflow/core';
import { readKlineBars } from '@quoteflow/pipelines';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'sync-bars-exact-token-0f3e';
const CODES = ['AAPL.US', '700.HK', '600416.SH'];
let sim: Simulator;
let work: string;

beforeAll(async () => {
  const lastSaturdayNoonUtc = Date.UTC(2026, 10, 21, 12);
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional' },
    seed: 12,
    clock: acceleratedClock({ speed: 1, startMs: lastSaturdayNoonUtc }),
  });
  work = await mkdtemp(join(tmpdir(), 'qf-bars-exact-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
});

it.each([
  ['sync', ['--kline-types', '1,5', '--duration', '3']],
  ['backfill', ['--kline-type', '1']],
] as const)(
  '%s --bars 50 of stocks whose market is closed writes 50 rows per series',
  async (command, args) => {
    const out = join(work, command);
    const r = await runQuoteflow(
      [command, '--codes', CODES.join(','), '--bars', '50', '--out', out, ...args],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const bars = await readKlineBars(out);
    const types = command === 'sync' ? [1, 5] : [1];
    for (const code of CODES)
      for (const klineType of types)
        expect(
          bars.filter((b) => b.code === code && b.klineType === klineType),
          `${code} ${klineType}`,
        ).toHaveLength(50);
  },
);
