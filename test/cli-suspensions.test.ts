// End-to-end: suspension queries that fail or wait say so at once, against the simulator (strict
// limits, real clock). Each retry of a suspension query would wait for the token's once-a-minute
// slot, so a failure is reported after one request, and a wait for the slot is announced.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { runQuoteflow } from './support/quoteflow-process.js';

let sim: Simulator;
let stateDir: string;
// A token per test: each starts with a free suspension slot.
const env = (token: string): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: stateDir,
});

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    tokens: { 'susp-a-91c2': 'professional', 'susp-b-91c2': 'professional', 'susp-c-91c2': 'professional' },
    seed: 3,
  });
  stateDir = await mkdtemp(join(tmpdir(), 'qf-susp-state-'));
});

afterAll(async () => {
  await sim.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('suspension queries that fail', () => {
  it.each([
    ['its own error body (HTTP 500, success: false)', 'rate-limit', 'susp-a-91c2'],
    ['an answer that is not JSON', 'http-5xx', 'susp-b-91c2'],
  ] as const)(
    'report %s after one request, in seconds, not minutes of retries',
    async (_name, kind, token) => {
      sim.addFault({ kind, endpoint: 'suspension', times: 1 });
      const before = sim.log.count({ endpoint: 'suspension' });
      const r = await runQuoteflow(['suspensions', '--exchange', 'nyse'], env(token));
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBe(2);
      expect(r.stderr).toMatch(/suspension/);
      expect(r.elapsedMs).toBeLessThan(15_000);
      expect(sim.log.count({ endpoint: 'suspension' }) - before).toBe(1);
    },
  );
});

describe('a suspension watch waiting for the slot', () => {
  it('says it waits for the once-a-minute slot another process of the token just used', async () => {
    const first = await runQuoteflow(
      ['suspensions', '--exchange', 'sse', '--format', 'json'],
      env('susp-c-91c2'),
    );
    expect(first.code, first.stderr).toBe(0);
    const watch = await runQuoteflow(
      ['suspensions', '--exchange', 'nyse', '--watch', '--duration', '5'],
      env('susp-c-91c2'),
    );
    expect(watch.code, watch.stderr).toBe(0);
    expect(watch.stderr).toMatch(/waiting for the suspension query slot: one query a minute per token/);
    expect(watch.stdout).toBe('');
    expect(sim.log.refused()).toEqual([]);
  });
});
