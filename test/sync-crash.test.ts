/**
 * `quoteflow sync` killed with SIGKILL at random moments, again and again, with a compaction
 * running beside it: after every kill each closed bar is in exactly one visible file with its final
 * values, and the restarted sync resumes from the dataset's commit log without a gap. The built
 * binary against the simulator's strict enforcement (real clock, real sockets); Parquet files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { readKlineBars } from '../packages/pipelines/src/index.js';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { ensurePython, readDatasets } from './support/python.js';
import { startQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'sync-crash-token-41c2';
const CODES = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'];
let sim: Simulator;
let work: string;

beforeAll(async () => {
  ensurePython();
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 5 });
  work = await mkdtemp(join(tmpdir(), 'qf-sync-crash-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_LOG_LEVEL: 'info',
});

/** Per series key, the bar starts visible to a file-listing reader, and whether each equals the market's bar. */
async function visible(dir: string): Promise<Map<string, number[]>> {
  const byCode = new Map<string, number[]>();
  const decimals = new Map(CODES.map((c) => [c, sim.market.product(c)!.priceDecimals]));
  const market = new Map(
    CODES.map((c) => [
      c,
      new Map(
        sim.market
          .bars(c, 1, sim.marketNow(), 3_000)
          .filter((b) => !b.forming)
          .map((b) => [b.startMs, b]),
      ),
    ]),
  );
  for (const b of await readKlineBars(dir)) {
    byCode.set(b.code, [...(byCode.get(b.code) ?? []), b.tsMs]);
    const m = market.get(b.code)?.get(b.tsMs);
    expect(m, `${b.code} ${new Date(b.tsMs).toISOString()} is a closed bar of the market`).toBeDefined();
    const wire = (v: number): number => Number(v.toFixed(decimals.get(b.code)!));
    expect([b.open, b.high, b.low, b.close], `${b.code} ${b.tsMs} final values`).toEqual([
      wire(m!.open),
      wire(m!.high),
      wire(m!.low),
      wire(m!.close),
    ]);
  }
  return byCode;
}

function expectEachOnce(byCode: Map<string, number[]>): void {
  for (const [code, starts] of byCode)
    expect(new Set(starts).size, `${code}: a bar twice`).toBe(starts.length);
}

it('kill -9 of sync at random moments, 8 times, compaction beside it: every closed bar once, final values, no gap after restart', async () => {
  const out = join(work, 'out');
  const args = [
    'sync',
    '--codes',
    CODES.join(','),
    '--kline-types',
    '1',
    '--bars',
    '300',
    '--out',
    out,
    '--checkpoint-ms',
    '200',
  ];
  for (let round = 0; round < 8; round++) {
    const startedAt = Date.now();
    const run = startQuoteflow(args, env());
    // A random moment once it is at work (its first request arrived: --out is made before it),
    // however long a loaded machine takes to start the process.
    await vi.waitFor(() => expect(sim.log.count({ sinceMs: startedAt })).toBeGreaterThan(0), {
      timeout: 30_000,
      interval: 20,
    });
    await new Promise((r) => setTimeout(r, Math.random() * 2_500));
    // Every other round a compaction runs while the sync is killed.
    const compaction =
      round % 2 === 1 ? startQuoteflow(['compact', '--out', out, '--dataset', 'kline'], env()) : undefined;
    await new Promise((r) => setTimeout(r, Math.random() * 400));
    run.child.kill('SIGKILL');
    await run.done;
    const c = await compaction?.done;
    if (c !== undefined) expect(c.code, c.stderr).toBe(0);
    expectEachOnce(await visible(out));
  }
  // The last run ends normally: each series holds its 300 most recent bars and everything since, contiguous.
  const last = startQuoteflow([...args, '--duration', '4'], env());
  const end = await last.done;
  expect(end.code, end.stderr).toBe(0);
  const byCode = await visible(out);
  expectEachOnce(byCode);
  for (const code of CODES) {
    const starts = (byCode.get(code) ?? []).sort((a, b) => a - b);
    expect(starts.length, code).toBeGreaterThanOrEqual(300);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!, `${code}: gap`).toBe(60_000);
  }
  // The Delta log after eight kills: delta-rs reads exactly the bars the files hold.
  const [delta] = await readDatasets([{ reader: 'deltalake', path: join(out, 'kline') }]);
  const fromDelta = delta!.rows.map((r) => `${String(r.code)} ${String(r.ts)}`).sort();
  const fromFiles = [...byCode].flatMap(([code, starts]) => starts.map((t) => `${code} ${t}`)).sort();
  expect(fromDelta).toEqual(fromFiles);
  expect(sim.log.refused()).toEqual([]);
}, 180_000);
