/**
 * `quoteflow depth` keeps its table healthy while it runs, as `sync` does: on the simulator's
 * accelerated clock (60x, so a file is finished every second of real time: its 60 s age on the
 * command's clock) a run of a few seconds commits a file per second, and the table it leaves was
 * compacted in the background (fewer live files than commits, a Delta checkpoint), with every tick
 * once for delta-rs. `--no-upkeep` leaves the files as written; the flags are checked before any
 * request.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetLog } from '../packages/sinks/src/index.js';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { ensurePython, readDatasets } from './support/python.js';
import { runQuoteflow } from './support/quoteflow-process.js';
import { newSharedClock } from './support/shared-clock.js';

const TOKEN = 'depth-upkeep-7c2e';
const BARE = 'depth-no-upkeep-7c2e';
// Noon UTC: the run stays on one depth day (date=2026-01-05) at 60x.
const shared = newSharedClock({ speed: 60, startMs: Date.parse('2026-01-05T12:00:00Z') });
let sim: Simulator;
let work: string;

beforeAll(async () => {
  ensurePython();
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional', [BARE]: 'professional' },
    clock: shared.clock,
    seed: 31,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-depth-upkeep-'));
}, 120_000);
afterAll(async () => {
  await sim?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

const env = (token: string): Record<string, string> => ({
  ...shared.env,
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: join(work, `state-${token}`),
});

const depthArgs = (out: string, ...more: string[]): string[] => [
  'depth',
  '--codes',
  'BTCUSDT,ETHUSDT',
  '--out',
  out,
  '--duration',
  '12',
  ...more,
];

/** The table's commits: how many added data files (the writer's) and how many were upkeep's merges. */
async function commitsOf(table: string): Promise<{ writes: number; merges: number; checkpoints: number }> {
  const names = await readdir(join(table, '_delta_log'));
  let writes = 0;
  let merges = 0;
  for (const name of names.filter((n) => /^\d{20}\.json$/.test(n))) {
    const text = await readFile(join(table, '_delta_log', name), 'utf8');
    if (text.includes('"operation":"OPTIMIZE"')) merges++;
    else if (text.includes('"add":')) writes++;
  }
  return { writes, merges, checkpoints: names.filter((n) => n.endsWith('.checkpoint.parquet')).length };
}

describe('quoteflow depth keeps its table healthy while it runs', () => {
  it('leaves a compacted table: fewer live files than commits, a Delta checkpoint, every tick once', async () => {
    const out = join(work, 'on');
    const run = await runQuoteflow(depthArgs(out, '--upkeep-rows-per-file', '100000'), env(TOKEN));
    expect(run.code, run.stderr).toBe(0);
    const table = join(out, 'depth');
    const { writes, merges, checkpoints } = await commitsOf(table);
    const log = await DatasetLog.open(out, 'depth');
    expect(writes, 'files committed by the run').toBeGreaterThanOrEqual(8);
    expect(merges, 'merges by upkeep').toBeGreaterThan(0);
    expect(checkpoints).toBeGreaterThan(0);
    expect(log.files.size).toBeLessThan(writes);
    const [back] = await readDatasets([{ reader: 'deltalake', path: table }]);
    const ticks = back!.rows.map((r) => `${String(r.code)} ${String(r.seq)}`);
    expect(ticks.length).toBe([...log.files.values()].reduce((n, f) => n + f.rows, 0));
    expect(new Set(ticks).size).toBe(ticks.length);
  });

  it('--no-upkeep leaves the files as written', async () => {
    const out = join(work, 'off');
    const run = await runQuoteflow(depthArgs(out, '--no-upkeep'), env(BARE));
    expect(run.code, run.stderr).toBe(0);
    const { writes, merges, checkpoints } = await commitsOf(join(out, 'depth'));
    expect(merges).toBe(0);
    expect(checkpoints).toBe(0);
    expect((await DatasetLog.open(out, 'depth')).files.size).toBe(writes);
  });

  it('refuses contradicting or misplaced upkeep flags with exit 2, before any request', async () => {
    const before = sim.log.count({});
    const both = await runQuoteflow(
      depthArgs(join(work, 'bad'), '--no-upkeep', '--upkeep-retention', '1h'),
      env(TOKEN),
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--upkeep-retention sets what --no-upkeep turns off');
    const noWatch = await runQuoteflow(['suspensions', '--exchange', 'nyse', '--no-upkeep'], env(TOKEN));
    expect(noWatch.code).toBe(2);
    expect(noWatch.stderr).toContain('--no-upkeep needs --watch');
    expect(sim.log.count({})).toBe(before);
  });
});
