// End-to-end: ten `quoteflow` processes (the built binary; `pnpm exec tsc -b` first) on one token
// on plan basic, some at the same time and some back to back, against a simulator that refuses
// what the plan refuses. They share the token's quota through the state directory
// (QUOTEFLOW_STATE_DIR), so the service refuses nothing. `QF_QUOTA_SEPARATE_STATE=1` gives each
// process its own state directory instead (no sharing), to see what the shared store prevents.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { filesUnder, runQuoteflow, type QuoteflowRun } from './support/quoteflow-process.js';

const TOKEN = 'quota-processes-token-7d2a9c';
const SEPARATE = process.env['QF_QUOTA_SEPARATE_STATE'] === '1';

interface Run extends QuoteflowRun {
  readonly args: readonly string[];
}

let sim: Simulator;
let work: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'basic' }, limitMode: 'strict', seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'qf-quota-processes-'));
});
afterAll(async () => {
  await sim?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

let runs = 0;
async function quoteflow(args: readonly string[]): Promise<Run> {
  const stateDir = join(work, SEPARATE ? `state-${runs++}` : 'state');
  const run = await runQuoteflow(args, {
    QUOTEFLOW_BASE_URL: sim.url,
    QUOTEFLOW_TOKEN: TOKEN,
    QUOTEFLOW_PLAN: 'basic',
    QUOTEFLOW_STATE_DIR: stateDir,
    QUOTEFLOW_LOG_FORMAT: 'json',
  });
  return { ...run, args };
}

const staticInfo = ['static-info', '--codes', 'AAPL.US,700.HK', '--format', 'json'];
const yesterdayClose = ['yesterday-close', '--codes', 'AAPL.US,BTCUSDT', '--format', 'json'];
const suspensions = ['suspensions', '--exchange', 'nyse', '--format', 'json'];
const backfill = (name: string) => [
  'backfill',
  '--codes',
  'BTCUSDT,ETHUSDT',
  '--kline-type',
  '1',
  '--bars',
  '600',
  '--out',
  join(work, name),
  '--format',
  'ndjson',
];

describe('ten quoteflow processes on one token (plan basic)', () => {
  it('share one quota through the state directory: the service refuses nothing, every process exits 0', async () => {
    const since = Date.now();
    // Five at once, then five back to back: each starts as the previous one exits.
    const together = await Promise.all(
      [staticInfo, yesterdayClose, backfill('together'), staticInfo, suspensions].map((args) =>
        quoteflow(args),
      ),
    );
    const oneByOne: Run[] = [];
    for (const args of [yesterdayClose, staticInfo, backfill('after'), suspensions, staticInfo])
      oneByOne.push(await quoteflow(args));

    const all = [...together, ...oneByOne];
    for (const run of all) expect(run.code, `${run.args.join(' ')}\n${run.stderr}`).toBe(0);
    const requests = sim.log.filter({ sinceMs: since });
    const refused = sim.log.refused().map((e) => [e.endpoint, e.refusedBy]);
    console.log(
      `quota-processes: ${requests.length} requests, ${refused.length} refused (${SEPARATE ? 'separate' : 'shared'} state)`,
    );
    expect(refused).toEqual([]);
    // Two suspension queries (one a minute on every plan): the second waited for the first's minute.
    const queries = sim.log.filter({ endpoint: 'suspension', sinceMs: since });
    expect(queries).toHaveLength(2);
    expect(queries[1]!.arrivalMs - queries[0]!.arrivalMs).toBeGreaterThanOrEqual(60_000);
    // The token is nowhere in the state directory, its file names or any output.
    if (!SEPARATE) {
      for (const file of await filesUnder(join(work, 'state'))) {
        expect(file).not.toContain(TOKEN);
        expect((await readFile(file)).includes(TOKEN)).toBe(false);
      }
    }
    for (const run of all) expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });
});
