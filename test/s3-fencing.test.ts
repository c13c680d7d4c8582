/**
 * Writers without a shared disk, on one table in the run's S3Proxy: two DatasetSinks (each with
 * its own local scratch directory, sharing only the bucket) commit their own series side by side;
 * a commit of a series another writer committed after this one read its watermarks (a takeover
 * while this one was paused) is refused by the log itself, whatever its lease said, and leaves
 * nothing in the table; a writer whose fence says no commits nothing; one that re-reads the log
 * (a series handed back) commits again. delta-rs reads every bar once.
 */
import { beforeAll, expect, it } from 'vitest';
import type { BarUpdate } from '../packages/core/src/index.js';
import { DatasetSink, FileSinkError } from '../packages/sinks/src/index.js';
import { ensurePython, readDatasets } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const T0 = Date.UTC(2026, 2, 2, 14, 30);
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  bucket = await freshBucket('fencing');
  // The sinks run in this process: the SDK reads the server and credentials from its environment.
  Object.assign(process.env, bucket.env());
}, 600_000);

const bar = (code: string, minute: number): BarUpdate => {
  const tsMs = T0 + minute * 60_000;
  return {
    type: 'bar-update',
    final: true,
    revision: 0,
    code,
    klineType: 1,
    tsMs,
    open: minute,
    high: minute + 1,
    low: minute - 1,
    close: minute + 0.5,
    volume: 1,
    turnover: 2,
    readAtMs: tsMs + 120_000,
    receivedAtMs: tsMs + 120_100,
  };
};

async function rows(url: string): Promise<string[]> {
  const [back] = await readDatasets([{ reader: 'deltalake', path: `${url}/kline`, s3: bucket.server }]);
  return back!.rows.map((r) => `${String(r.code)} ${(Number(r.ts) - T0) / 60_000}`).sort();
}

it('two writers sharing only the bucket: their own series side by side; a commit of a series taken over meanwhile is refused by the log', async () => {
  const url = bucket.url('shared');
  let leaseA = true;
  // Cluster workers: their cluster's lease gives them series, so they take them over in the table.
  const a = await DatasetSink.open({
    dir: url,
    upkeep: false,
    fence: () => leaseA,
    ifOwned: 'take-over',
  });
  const b = await DatasetSink.open({ dir: url, upkeep: false, ifOwned: 'take-over' });
  try {
    // Side by side: A writes AAA, B writes BBB, checkpoints interleaved.
    for (let m = 0; m < 3; m++) {
      a.write(bar('AAA.US', m));
      b.write(bar('BBB.US', m));
      await a.checkpoint();
      await b.checkpoint();
    }
    expect(await rows(url)).toEqual(
      ['AAA.US 0', 'AAA.US 1', 'AAA.US 2', 'BBB.US 0', 'BBB.US 1', 'BBB.US 2'].sort(),
    );

    // A is paused with bars of AAA in hand; B takes AAA over (it claims it and re-reads the log) and commits it.
    a.write(bar('AAA.US', 3));
    await b.claim(['AAA.US|1']);
    await b.refresh();
    b.write(bar('AAA.US', 3));
    b.write(bar('AAA.US', 4));
    await b.checkpoint();
    // A resumes, its lease still looks valid to it: the log refuses the commit.
    const refused = await a.checkpoint().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(FileSinkError);
    expect((refused as FileSinkError).code).toBe('QF_FENCED');
    expect((refused as Error).message).toMatch(/AAA\.US\|1/);
    const afterTakeover = await rows(url);
    expect(afterTakeover.filter((r) => r.startsWith('AAA.US'))).toEqual([
      'AAA.US 0',
      'AAA.US 1',
      'AAA.US 2',
      'AAA.US 3',
      'AAA.US 4',
    ]);
    // Nothing of A's refused checkpoint is left in the bucket beside the table's files.
    const parquet = (await bucket.keys('shared/kline/')).filter((k) => k.endsWith('.parquet'));
    expect(parquet).toHaveLength(7);
  } finally {
    await a.close();
  }

  // A writer whose lease lapsed commits nothing (the fence, asked right before the PUT).
  leaseA = false;
  const c = await DatasetSink.open({
    dir: url,
    upkeep: false,
    fence: () => leaseA,
    ifOwned: 'take-over',
  });
  c.write(bar('CCC.US', 0));
  await expect(c.checkpoint()).rejects.toMatchObject({ code: 'QF_FENCED' });
  await c.close();

  // AAA handed back to a writer that re-reads the log first: it resumes where B ended.
  const d = await DatasetSink.open({ dir: url, upkeep: false, ifOwned: 'take-over' });
  await d.claim(['AAA.US|1']);
  await d.refresh();
  for (let m = 3; m < 7; m++) d.write(bar('AAA.US', m)); // 3 and 4 are B's: dropped
  await d.checkpoint();
  await d.close();
  await b.close();
  const all = await rows(url);
  expect(all).toEqual([...new Set(all)]);
  expect(all.filter((r) => r.startsWith('AAA.US'))).toHaveLength(7);
  expect(all.filter((r) => r.startsWith('CCC.US'))).toEqual([]);
}, 300_000);
