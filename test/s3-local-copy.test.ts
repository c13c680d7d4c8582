/**
 * `openLocalCopy` of a dataset root on S3 (what `inspect` and `report` read): every file of each
 * table's current version, byte for byte, downloaded several at a time; a file the log names that
 * the bucket no longer holds fails the copy naming it (a copy without its rows would report them
 * as missing data), and leaves no temporary directory behind.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type DatasetLog } from '../packages/sinks/src/index.js';
import { openLocalCopy, openStore } from '../packages/sinks/src/internal.js';
import { bar, writeKlineTable } from './support/delta-tables.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const T0 = Date.UTC(2026, 1, 2, 14, 30);
const MIN = 60_000;
const CODES = ['AAPL.US', 'MSFT.US', 'NVDA.US', '00700.HK', '600519.SH'];
let bucket: TestBucket;
let scratch: string;

beforeAll(async () => {
  bucket = await freshBucket('local-copy');
  Object.assign(process.env, bucket.env());
  scratch = await mkdtemp(join(tmpdir(), 'qf-local-copy-'));
}, 120_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** A kline table at `s3://BUCKET/prefix`: 12 commits of one bar per code, then its log. */
async function tableAt(prefix: string): Promise<DatasetLog> {
  const opened = await openStore(bucket.url(prefix));
  try {
    const commits = Array.from({ length: 12 }, (_, i) =>
      CODES.map((code, c) => bar(code, 1, T0 + i * MIN, 10 + i + c / 4)),
    );
    return await writeKlineTable(opened.root, commits, { store: opened.store! });
  } finally {
    await opened.close();
  }
}

/** Runs `body` with `os.tmpdir()` at a directory of its own; resolves with what it left there. */
async function inOwnTmpdir(body: () => Promise<void>): Promise<string[]> {
  const own = await mkdtemp(join(scratch, 'tmp-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = own;
  try {
    await body();
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
  return readdir(own);
}

it('copies every file of the current version, byte for byte', async () => {
  const log = await tableAt('whole');
  // A file a commit at least: more than the downloads in flight at once (8).
  expect(log.files.size).toBeGreaterThanOrEqual(12);
  const copy = await openLocalCopy(bucket.url('whole'));
  try {
    const copied = (await readdir(copy.dir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(copy.dir.length + 1))
      .sort();
    expect(copied).toEqual([...log.files.keys()].sort());
    for (const path of copied) {
      const original = await bucket.read(`whole/${path}`);
      expect(Buffer.compare(await readFile(join(copy.dir, path)), original), path).toBe(0);
    }
  } finally {
    await copy.close();
  }
}, 120_000);

it('a file the log names but the bucket lost fails the copy, naming it, and leaves nothing behind', async () => {
  const log = await tableAt('lost');
  const lost = [...log.files.keys()].sort()[7]!;
  await bucket.client.send(new DeleteObjectCommand({ Bucket: bucket.name, Key: `lost/${lost}` }));
  const left = await inOwnTmpdir(async () => {
    const failure = await openLocalCopy(bucket.url('lost')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({ code: 'QF_DATASET_LOG' });
    expect((failure as Error).message).toContain(lost);
    expect((failure as Error).message).toContain(`version ${log.version}`);
  });
  expect(left).toEqual([]);
}, 120_000);
