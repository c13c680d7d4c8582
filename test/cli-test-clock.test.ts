// The CLI's test-only clock seam (QF_TEST_CLOCK, packages/cli/src/internal/test-clock.ts), which
// `pnpm bench soak` runs the real commands on: a command given the shared accelerated clock of its
// simulator reads its time (every bar's `read_at` lies in the simulator's market time, a day in
// 2025 here, not the machine's), and commands of one token started at once share the token's quota
// on that clock through the state directory, so the simulator, which keeps its windows on the same
// clock, refuses nothing of two backfills at once on plan basic (one request per second: a quota
// per process would send two in a second).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { dataFilesUnder, runQuoteflow } from './support/quoteflow-process.js';
import { newSharedClock } from './support/shared-clock.js';

const TOKEN = 'test-clock-token-4e1b7f';
const START_MS = Date.parse('2025-10-28T14:00:00Z');
const shared = newSharedClock({ speed: 60, startMs: START_MS });

let sim: Simulator;
let work: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'basic' }, clock: shared.clock, seed: 5 });
  work = await mkdtemp(join(tmpdir(), 'qf-test-clock-'));
});
afterAll(async () => {
  await sim?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

const backfill = (out: string): string[] => [
  'backfill',
  '--codes',
  'BTCUSDT,ETHUSDT',
  '--kline-type',
  '1',
  '--bars',
  '1200',
  '--out',
  join(work, out),
  '--format',
  'ndjson',
];

describe('QF_TEST_CLOCK (test-only): a command on its simulator’s accelerated clock', () => {
  it('stamps what it reads with that clock and shares the token’s quota on it with the other commands', async () => {
    const env = {
      ...shared.env,
      QUOTEFLOW_BASE_URL: sim.url,
      QUOTEFLOW_TOKEN: TOKEN,
      QUOTEFLOW_PLAN: 'basic',
      QUOTEFLOW_STATE_DIR: join(work, 'state'),
    };
    const runs = await Promise.all([runQuoteflow(backfill('a'), env), runQuoteflow(backfill('b'), env)]);
    const endMs = shared.clock.now();
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    expect(sim.log.refused().map((e) => [e.endpoint, e.refusedBy])).toEqual([]);
    expect(sim.log.filter({ endpoint: 'kline' }).length).toBeGreaterThanOrEqual(2 * 2 * 3);
    const readAt: number[] = [];
    for (const out of ['a', 'b'])
      for (const file of await dataFilesUnder(join(work, out, 'kline')))
        for (const line of (await readFile(file, 'utf8')).split('\n').filter((l) => l !== ''))
          readAt.push(Date.parse((JSON.parse(line) as { read_at: string }).read_at));
    expect(readAt.length).toBeGreaterThanOrEqual(2 * 2 * 1200);
    expect(Math.min(...readAt)).toBeGreaterThanOrEqual(START_MS);
    expect(Math.max(...readAt)).toBeLessThanOrEqual(endMs);
  });
});
