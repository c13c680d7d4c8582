/**
 * Two quoteflow processes meet at one `--out` (the built binary against the simulator, on the real
 * clock): the table arbitrates. A second `sync` of a series another live sync writes fails before
 * any request, naming the table, the series and that sync (host, pid, since when); with
 * `--wait-for-writer` it waits, says so once, and goes on where the first ended once it stops; a
 * sync killed with SIGKILL is taken over at once by the next one, without a duplicate. `depth` and
 * `suspensions --watch` commit every file through their table's Delta log: two runs and a
 * `compact` read back by delta-rs, Polars and DuckDB's delta extension hold the Parquet files'
 * rows, a directory an older quoteflow wrote (files, no log) is taken into the log once, and a
 * second `depth` of the same codes is refused at start.
 */
import { tokenLabel } from '../packages/simulator/src/internal.js';
import { listDataFiles } from '../packages/sinks/src/internal.js';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, vi, type ExpectStatic } from 'vitest';
import { DatasetLog, type DatasetKind } from '../packages/sinks/src/index.js';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { ensurePython, readDatasets, type ReadBack } from './support/python.js';
import { runQuoteflow, startQuoteflow, type QuoteflowChild } from './support/quoteflow-process.js';

const TOKENS = {
  first: 'table-writers-first-3b1c',
  second: 'table-writers-second-3b1c',
  killed: 'table-writers-killed-3b1c',
  taker: 'table-writers-taker-3b1c',
  depth: 'table-writers-depth-3b1c',
  depthAgain: 'table-writers-depth-again-3b1c',
  watch: 'table-writers-watch-3b1c',
  watchAgain: 'table-writers-watch-again-3b1c',
} as const;
let sim: Simulator;
let work: string;

beforeAll(async () => {
  ensurePython();
  sim = await startSimulator({
    port: 0,
    tokens: Object.fromEntries(Object.values(TOKENS).map((t) => [t, 'professional'])),
    seed: 23,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-table-writers-'));
}, 120_000);
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

/** The environment of a process on `token` (each its own quota state: they share nothing but the table). */
const env = (token: string): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: join(work, `state-${token}`),
  QUOTEFLOW_LOG_FORMAT: 'json',
});

const syncArgs = (codes: string, out: string, ...more: string[]): string[] => [
  'sync',
  '--codes',
  codes,
  '--kline-types',
  '1',
  '--bars',
  '100',
  '--out',
  out,
  '--checkpoint-ms',
  '500',
  ...more,
];

/** The table's log as it is now. */
const logOf = (out: string, dataset: DatasetKind = 'kline'): Promise<DatasetLog> =>
  DatasetLog.open(out, dataset);

/** Requests the simulator saw with `token` since `sinceMs`. */
const requestsOf = (token: string, sinceMs: number): number =>
  sim.log.count({ token: tokenLabel(token, 'professional'), sinceMs });

/** Each row's `code ts` (kline) as a Delta reader gave it back, sorted. */
const klineRows = (back: ReadBack): string[] =>
  back.rows.map((r) => `${String(r.code)} ${Number(r.ts)}`).sort();

/** Reads the kline table with delta-rs: each bar once, and every series' bars. */
async function expectEachBarOnce(expect: ExpectStatic, out: string, codes: readonly string[]): Promise<void> {
  const [back] = await readDatasets([{ reader: 'deltalake', path: join(out, 'kline') }]);
  const rows = klineRows(back!);
  expect(new Set(rows).size, 'a bar twice').toBe(rows.length);
  for (const code of codes)
    expect(rows.filter((r) => r.startsWith(`${code} `)).length).toBeGreaterThanOrEqual(100);
}

/** Waits until the sync's output says what it waits for, or it ends. */
const stderrOf = (child: QuoteflowChild): string => child.stderr();

describe.concurrent('two writers of one table (CLI)', () => {
  it('a second sync of a series fails at start naming the table, the series and the first sync; with --wait-for-writer it waits, then goes on where the first ended', async ({
    expect,
  }) => {
    const out = join(work, 'two-syncs');
    const first = startQuoteflow(syncArgs('BTCUSDT', out, '--duration', '120'), env(TOKENS.first));
    await vi.waitFor(async () => expect((await logOf(out)).owners.size).toBe(1), {
      timeout: 30_000,
      interval: 100,
    });

    const sinceMs = Date.now();
    const refused = await runQuoteflow(
      syncArgs('BTCUSDT,ETHUSDT', out, '--duration', '30'),
      env(TOKENS.second),
    );
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `quoteflow: error: table ${join(out, 'kline')}: BTCUSDT\\|1 is written by another live writer \\(host ${hostname()}, pid ${first.child.pid}, writing since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, renewed \\d+ s ago, quoteflow sync\\): stop that writer first, or pass --wait-for-writer .* \\[QF_OWNED\\]`,
      ),
    );
    expect(requestsOf(TOKENS.second, sinceMs), 'no request before the refusal').toBe(0);

    const waiting = startQuoteflow(
      syncArgs('BTCUSDT,ETHUSDT', out, '--duration', '120', '--wait-for-writer'),
      env(TOKENS.second),
    );
    await vi.waitFor(
      () => expect(stderrOf(waiting)).toContain('waiting until it stops or its lease runs out'),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    // The first has committed its history by now (it held the table while the others came).
    await vi.waitFor(
      async () => expect((await logOf(out)).series.get('BTCUSDT|1')?.rows).toBeGreaterThanOrEqual(100),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(0);
    // The second claims both series and commits ETHUSDT's history; BTCUSDT resumes where the first ended.
    await vi.waitFor(
      async () => expect((await logOf(out)).series.get('ETHUSDT|1')?.rows).toBeGreaterThanOrEqual(100),
      {
        timeout: 60_000,
        interval: 200,
      },
    );
    waiting.child.kill('SIGINT');
    const second = await waiting.done;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr.match(/waiting until it stops/g)).toHaveLength(1);
    await expectEachBarOnce(expect, out, ['BTCUSDT', 'ETHUSDT']);
    const log = await logOf(out);
    expect([log.owners.size, log.writers.size]).toEqual([0, 0]);
  }, 240_000);

  it('a sync killed with SIGKILL is taken over at once by the next, which resumes where it ended without a duplicate', async ({
    expect,
  }) => {
    const out = join(work, 'killed');
    const killed = startQuoteflow(syncArgs('BTCUSDT', out, '--duration', '120'), env(TOKENS.killed));
    await vi.waitFor(
      async () => expect((await logOf(out)).series.get('BTCUSDT|1')?.rows).toBeGreaterThanOrEqual(100),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    killed.child.kill('SIGKILL');
    await killed.done;
    const before = await logOf(out);
    expect(before.writers.size).toBe(1); // the dead one's claim is still in the log
    const taker = await runQuoteflow(syncArgs('BTCUSDT', out, '--duration', '4'), env(TOKENS.taker));
    expect(taker.code, taker.stderr).toBe(0);
    expect(taker.stderr).not.toContain('waiting');
    await expectEachBarOnce(expect, out, ['BTCUSDT']);
    const after = await logOf(out);
    expect([after.owners.size, after.writers.size]).toEqual([0, 0]);
  }, 240_000);

  it('depth and suspension tables: two runs, an older layout adopted once and a compact, read back with the Parquet files rows by delta-rs, Polars and DuckDB', async ({
    expect,
  }) => {
    const out = join(work, 'captures');
    const depth = (token: string, seconds: string) =>
      runQuoteflow(['depth', '--codes', 'BTCUSDT,ETHUSDT', '--out', out, '--duration', seconds], env(token));
    const watch = (token: string) =>
      runQuoteflow(
        [
          'suspensions',
          '--exchange',
          'nyse',
          '--watch',
          '--format',
          'ndjson',
          '--out',
          out,
          '--duration',
          '3',
        ],
        env(token),
      );

    // A first capture of each, its log then removed: the layout an older quoteflow left.
    const [d1, w1] = await Promise.all([depth(TOKENS.depth, '3'), watch(TOKENS.watch)]);
    expect(d1.code, d1.stderr).toBe(0);
    expect(w1.code, w1.stderr).toBe(0);
    for (const dataset of ['depth', 'suspension'] as const) {
      expect((await logOf(out, dataset)).files.size).toBeGreaterThan(0);
      await rm(join(out, dataset, '_delta_log'), { recursive: true });
    }
    // While a depth capture writes its codes, another one of one of them is refused at start.
    // It runs until stopped (SIGINT), so the second one meets it whatever the load.
    const capturing = startQuoteflow(
      ['depth', '--codes', 'BTCUSDT,ETHUSDT', '--out', out, '--duration', '120'],
      env(TOKENS.depthAgain),
    );
    await vi.waitFor(async () => expect((await logOf(out, 'depth')).owners.size).toBe(2), {
      timeout: 30_000,
      interval: 100,
    });
    const refused = await depth(TOKENS.depth, '3');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `table ${join(out, 'depth')}: BTCUSDT, ETHUSDT are written by another live writer \\(host ${hostname()}, pid ${capturing.child.pid}, .*quoteflow depth\\)`,
      ),
    );
    // Stopped once it polled a few books (its files finish on the stop).
    await vi.waitFor(
      () =>
        expect(
          sim.log.count({ token: tokenLabel(TOKENS.depthAgain, 'professional'), endpoint: 'depth-tick' }),
        ).toBeGreaterThanOrEqual(3),
      { timeout: 30_000, interval: 100 },
    );
    capturing.child.kill('SIGINT');
    const [d2, w2] = await Promise.all([capturing.done, watch(TOKENS.watchAgain)]);
    expect(d2.code, d2.stderr).toBe(0);
    expect(w2.code, w2.stderr).toBe(0);

    for (const dataset of ['depth', 'suspension'] as const) {
      const log = await logOf(out, dataset);
      expect([...log.files.keys()].sort(), `${dataset}: the log names every file on disk`).toEqual(
        await listDataFiles(out, dataset),
      );
      expect(await operationsOf(log), `${dataset}: adopted once`).toContain('adopt');
      expect((await operationsOf(log)).filter((o) => o === 'adopt')).toHaveLength(1);
    }
    const compacted = await runQuoteflow(['compact', '--out', out, '--format', 'json']);
    expect(compacted.code, compacted.stderr).toBe(0);

    const [depthFiles, depthRs, depthDuck, depthPolars, suspFiles, suspRs, suspDuck, suspPolars] =
      await readDatasets([
        { reader: 'pyarrow', path: join(out, 'depth'), hive: true },
        { reader: 'deltalake', path: join(out, 'depth') },
        { reader: 'duckdb-delta', path: join(out, 'depth') },
        // Polars' scan_delta refuses the uint64 seq column (README): Polars reads depth as Hive Parquet.
        { reader: 'polars', path: join(out, 'depth'), hive: true },
        { reader: 'pyarrow', path: join(out, 'suspension'), hive: true },
        { reader: 'deltalake', path: join(out, 'suspension') },
        { reader: 'duckdb-delta', path: join(out, 'suspension') },
        { reader: 'polars-delta', path: join(out, 'suspension') },
      ]);
    const depthRows = (b: ReadBack) =>
      b.rows.map((r) => `${String(r.code)} ${String(r.seq)} ${Number(r.tick_time)}`).sort();
    const suspRows = (b: ReadBack) =>
      b.rows.map((r) => `${String(r.symbol)} ${Number(r.publish_date)}`).sort();
    const want = depthRows(depthFiles!);
    expect(want.length).toBeGreaterThan(4);
    for (const back of [depthRs!, depthDuck!, depthPolars!])
      expect(depthRows(back), back.reader).toEqual(want);
    const wantSusp = suspRows(suspFiles!);
    expect(wantSusp.length).toBeGreaterThan(0);
    for (const back of [suspRs!, suspDuck!, suspPolars!])
      expect(suspRows(back), back.reader).toEqual(wantSusp);
  }, 240_000);
});

/** quoteflow's operation of each version of a table. */
async function operationsOf(log: DatasetLog): Promise<string[]> {
  const names = (await readdir(log.logDir)).filter((n) => /^\d{20}\.json$/.test(n)).sort();
  const out: string[] = [];
  for (const name of names) {
    const first = (await readFile(join(log.logDir, name), 'utf8')).split('\n', 1)[0]!;
    out.push(
      (JSON.parse(first) as { commitInfo: { quoteflow: { operation: string } } }).commitInfo.quoteflow
        .operation,
    );
  }
  return out;
}
