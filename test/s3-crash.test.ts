/**
 * kill -9 at random moments of commits and compactions on object storage (the run's S3Proxy): a
 * writer process (DatasetSink on `s3://…`, a checkpoint every few dozen bars) and a compacting
 * process (compactDataset on the same table, small files) are killed at random moments, round after
 * round; each restarted writer resends from its last acknowledged bar, as a restarted sync resumes,
 * and the log's watermarks drop what a killed checkpoint committed without saying so. After every
 * round delta-rs reads each bar at most once and every acknowledged bar; every version of the log
 * reads with no bar twice (no reader sees half a version); at the end delta-rs, Polars, Spark and DuckDB
 * read every bar exactly once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DELTA_READERS } from './support/delta-tables.js';
import { builtModule } from './support/built-module.js';
import { ensurePython, readDatasets } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';
import { barScript, crashRowOf, crashRowsOf, expectNoneTwice } from './support/crash-bars.js';
import { startTsxChild, type TsxChild } from './support/tsx-child.js';

const CODES = 7;
const T0 = Date.UTC(2026, 0, 5, 14, 30);
const PER_ROUND = 400;
const ROUNDS = 6;
let work: string;
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  work = await mkdtemp(join(tmpdir(), 'qf-s3-crash-'));
  bucket = await freshBucket('s3-crash');
}, 600_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const src = (path: string): string => JSON.stringify(builtModule(`sinks/src/files/${path}`));

const BARS = { t0: T0, codes: CODES };
const BAR = barScript(BARS);

// Sends bars [from, to) in checkpoints of 35 bars, saying after each commit how far it got.
const WRITER = `
import { DatasetSink } from ${src('dataset-sink.ts')};
${BAR}
const [dir, from, to] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
// Its series claimed at open (a killed predecessor's claims are taken over at once: its process is gone).
const series = Array.from({ length: ${CODES} }, (_, c) => 'C' + c + '.US|1');
const sink = await DatasetSink.open({ dir, encoderThreads: 0, upkeep: false, series });
console.log('ready');
for (let n = from; n < to; ) {
  const end = Math.min(to, n + 35);
  for (; n < end; n++) sink.write(bar(n));
  await sink.checkpoint();
  console.log('committed ' + end);
}
await sink.close();
console.log('done');
`;

// Compacts the table in a loop (files of at most 300 rows) until killed.
const COMPACTOR = `
import { compactDataset } from ${src('compact-dataset.ts')};
console.log('ready');
for (;;) {
  const done = await compactDataset({ dir: process.argv[2], dataset: 'kline', maxRowsPerFile: 300 });
  if (done.length > 0) console.log('compacted');
}
`;

const start = (script: string, args: string[]): Promise<TsxChild> =>
  startTsxChild(script, args, { ...bucket.env() });

const rowOf = (n: number): string => crashRowOf(BARS, n);

it('kill -9 of a writer and a compactor at random moments, round after round: every bar once, each version whole', async () => {
  const writer = join(work, 'writer.mjs');
  const compactor = join(work, 'compactor.mjs');
  await writeFile(writer, WRITER);
  await writeFile(compactor, COMPACTOR);
  const table = bucket.url('crash/kline');
  const dir = bucket.url('crash');
  let acked = 0;
  let sent = 0;
  let compactions = 0;
  for (let round = 0; round < ROUNDS; round++) {
    sent = acked + PER_ROUND;
    const [w, c] = await Promise.all([
      start(writer, [dir, String(acked), String(sent)]),
      start(compactor, [dir]),
    ]);
    // Each killed at its own random moment: uploading, putting a version, between the two. The
    // moments count from its start-up's end ('ready'): on a loaded machine start-up takes seconds.
    // The last round's compactor, if none committed yet (a loaded machine makes a compaction on S3
    // slower than every random moment), is killed at its moment after its first commit instead.
    const after = (p: TsxChild): string =>
      p === c && round === ROUNDS - 1 && compactions === 0 ? 'compacted' : 'ready';
    await Promise.all(
      [w, c].map(async (p) => {
        const deadline = Date.now() + 60_000;
        while (!p.out().includes(after(p)) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 2500));
        p.kill();
      }),
    );
    const [ws, cs] = await Promise.all([w.exited, c.exited]);
    expect(cs, c.err()).toBe('SIGKILL');
    expect(ws === 'SIGKILL' || ws === null, w.err()).toBe(true);
    for (const m of w.out().matchAll(/^committed (\d+)$/gm)) acked = Math.max(acked, Number(m[1]));
    compactions += c
      .out()
      .split('\n')
      .filter((l) => l === 'compacted').length;
    const [now] = await readDatasets([{ reader: 'deltalake', path: table, s3: bucket.server }]);
    const rows = crashRowsOf(now!);
    expectNoneTwice(rows, `round ${round}`);
    for (let n = 0; n < acked; n++) expect(rows, `round ${round}: acknowledged bar ${n}`).toContain(rowOf(n));
  }
  expect(compactions, 'some compactions committed before their kill').toBeGreaterThan(0);

  // A last writer sends everything up to where the rounds got, to its end.
  const last = await start(writer, [dir, String(acked), String(sent)]);
  expect(await last.exited, last.err()).toBe(null);
  expect(last.out()).toContain('done');

  // Every version of the log: no bar twice in any (delta-rs).
  const versions = (await bucket.keys('crash/kline/_delta_log/')).filter((k) =>
    /\/\d{20}\.json$/.test(k),
  ).length;
  const each = await readDatasets(
    Array.from({ length: versions }, (_, version) => ({
      reader: 'deltalake' as const,
      path: table,
      s3: bucket.server,
      version,
    })),
  );
  for (const [version, back] of each.entries()) expectNoneTwice(crashRowsOf(back), `version ${version}`);

  const want = Array.from({ length: sent }, (_, n) => rowOf(n)).sort();
  const finals = await readDatasets(
    DELTA_READERS.map((reader) => ({ reader, path: table, s3: bucket.server })),
  );
  for (const back of finals) expect(crashRowsOf(back), back.reader).toEqual(want);
}, 900_000);
