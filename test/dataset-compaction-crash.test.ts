/**
 * Compaction killed with SIGKILL at random moments, again and again, while a writer keeps
 * committing checkpoints to the same dataset: after every kill each row is in exactly one visible
 * file, and the next compaction finishes or undoes what the killed one left. At the end DuckDB,
 * pyarrow, Polars and Spark read the compacted dataset with exact types and every row once, and the
 * partition holds ceil(rows / max rows per file) files.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compactDataset, DatasetLog, DatasetWriter } from '../packages/sinks/src/index.js';
import { listDataFiles } from '../packages/sinks/src/internal.js';
import type { Bar } from '../packages/core/src/index.js';
import { readKlineBars } from '../packages/pipelines/src/index.js';
import { ensurePython, readDatasets, REPO_ROOT } from './support/python.js';
import { startTsxChild } from './support/tsx-child.js';

const MAX_ROWS = 700;
const CODES = 9;
const T0 = Date.UTC(2026, 0, 5, 14, 30);
let root: string;

beforeAll(async () => {
  ensurePython();
  root = await mkdtemp(join(tmpdir(), 'qf-compact-crash-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

// A child that compacts the kline dataset in a loop until it is killed. It imports the compaction's
// own module, not the package (whose Kafka clients would triple its start-up, twelve times).
const CHILD = `
import { compactDataset } from ${JSON.stringify(join(REPO_ROOT, 'packages/sinks/src/files/compact-dataset.ts'))};
console.log('ready');
for (;;) {
  console.log('start');
  const done = await compactDataset({ dir: process.argv[2], dataset: 'kline', maxRowsPerFile: ${MAX_ROWS} });
  console.log(done.length > 0 ? 'compacted' : 'idle');
}
`;

function bar(n: number, far = false): Bar {
  const tsMs = far ? -2_208_988_800_000 + n * 60_000 : T0 + Math.floor(n / CODES) * 60_000;
  return {
    type: 'bar',
    code: `C${n % CODES}.US`,
    klineType: 1,
    tsMs,
    open: n + 0.5,
    high: n + 1,
    low: n,
    close: n + 0.25,
    volume: n % 11 === 0 ? null : n,
    turnover: n * 10,
    readAtMs: T0 + 86_400_000,
  } as Bar;
}

/** One checkpoint of a sync: staged files committed to the log with what they hold, then published. */
async function commitCheckpoint(dir: string, from: number, count: number): Promise<void> {
  const writer = new DatasetWriter({ dir, encoderThreads: 0, publish: 'on-commit' });
  for (let n = from; n < from + count; n++) writer.append(bar(n));
  const files = await writer.flush();
  await writer.close();
  const log = await DatasetLog.open(dir, 'kline');
  await log.transaction((tx) =>
    tx.commit({
      operation: 'checkpoint',
      add: files.map((f) => ({ path: f.relativePath, rows: f.rows, bytes: f.bytes, staged: f.stagedPath! })),
    }),
  );
}

/** Every visible row's key (`code|ts`) and values, read from the files as a file-listing reader does. */
async function visibleRows(dir: string): Promise<Map<string, string[]>> {
  const seen = new Map<string, string[]>();
  for (const b of await readKlineBars(dir)) {
    const key = `${b.code}|${b.tsMs}`;
    seen.set(key, [...(seen.get(key) ?? []), `${b.close}`]);
  }
  return seen;
}

function expectEachOnce(rows: Map<string, string[]>, expected: number): void {
  const twice = [...rows].filter(([, v]) => v.length > 1);
  expect(twice).toEqual([]);
  expect(rows.size).toBe(expected);
}

it('kill -9 during compaction, 12 times beside a committing writer: every row exactly once, before and after', async () => {
  const dir = join(root, 'out');
  const script = join(root, 'compact-child.mts');
  await writeFile(script, CHILD);
  let written = 0;
  for (let i = 0; i < 20; i++, written += 150) await commitCheckpoint(dir, written, 150);
  let compactions = 0;
  let killedMidCompaction = 0;
  for (let round = 0; round < 12; round++) {
    const child = await startTsxChild(script, [dir]);
    // Kill at a random moment: while building, committing, swapping or removing the old files.
    const writes = (async () => {
      for (let i = 0; i < 3; i++, written += 40) await commitCheckpoint(dir, written, 40);
    })();
    await new Promise((r) => setTimeout(r, Math.random() * 1500));
    child.kill();
    // Killed, not crashed on its own.
    expect(await child.exited, child.err()).toBe('SIGKILL');
    const lines = child
      .out()
      .split('\n')
      .filter((l) => l !== '');
    compactions += lines.filter((l) => l === 'compacted').length;
    // Inside a compaction call when killed: it said 'start' and never finished.
    if (lines.at(-1) === 'start') killedMidCompaction++;
    await writes;
    expectEachOnce(await visibleRows(dir), written);
  }
  // The kills land inside compactions (not between them, not before the first), which load only
  // makes likelier: each call takes longer. How many completed is reported, not asserted.
  expect(killedMidCompaction, `${compactions} compactions completed`).toBeGreaterThan(3);
  // The next compaction finishes what the last kill left, and leaves ceil(rows / max) files.
  await compactDataset({ dir, dataset: 'kline', maxRowsPerFile: MAX_ROWS });
  const rows = await visibleRows(dir);
  expectEachOnce(rows, written);
  for (let n = 0; n < written; n++)
    expect(rows.get(`C${n % CODES}.US|${bar(n).tsMs}`)).toEqual([`${n + 0.25}`]);
  expect(await listDataFiles(dir, 'kline')).toHaveLength(Math.ceil(written / MAX_ROWS));
  // The Delta log after twelve kills: delta-rs reads every row once with its value, as the files hold them.
  const [delta] = await readDatasets([{ reader: 'deltalake', path: join(dir, 'kline') }]);
  const fromDelta = delta!.rows.map((r) => `${String(r.code)}|${String(r.ts)}|${String(r.close)}`).sort();
  const want = Array.from(
    { length: written },
    (_, n) => `C${n % CODES}.US|${bar(n).tsMs}|${n + 0.25}`,
  ).sort();
  expect(fromDelta).toEqual(want);
}, 240_000);

it('DuckDB, pyarrow, Polars and Spark read a compacted dataset with exact types, a far timestamp included', async () => {
  const dir = join(root, 'interop');
  const writer = new DatasetWriter({ dir, encoderThreads: 0 });
  for (let f = 0; f < 8; f++) {
    for (let n = f * 25; n < (f + 1) * 25; n++) writer.append(bar(n, n === 0));
    await writer.flush();
  }
  await writer.close();
  await compactDataset({ dir, dataset: 'kline' });
  expect((await listDataFiles(dir, 'kline')).length).toBeLessThanOrEqual(2); // 1900-01 and 2026-01
  const reads = await readDatasets(
    (['duckdb', 'pyarrow', 'polars', 'spark'] as const).map((reader) => ({
      reader,
      path: join(dir, 'kline'),
      hive: true,
    })),
  );
  for (const read of reads) {
    expect(read.rows, read.reader).toHaveLength(200);
    const ts = read.columns.find((c) => c.name === 'ts')!.type;
    expect(ts, read.reader).toMatch(
      /timestamp\[ms, tz=UTC\]|Datetime\(time_unit='ms', time_zone='UTC'\)|TIMESTAMP WITH TIME ZONE|^timestamp$/,
    );
    const keys = new Set(read.rows.map((r) => `${String(r.code)}|${String(r.ts)}`));
    expect(keys.size, read.reader).toBe(200);
    expect(keys.has(`C0.US|${-2_208_988_800_000}`), read.reader).toBe(true);
    const r7 = read.rows.find((r) => r.code === 'C7.US' && r.ts === bar(7).tsMs)!;
    expect([r7.close, r7.volume], read.reader).toEqual([7.25, 7]);
  }
}, 240_000);
