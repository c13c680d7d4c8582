/**
 * The Delta readers quoteflow did not write read a quoteflow table from object storage: a table
 * written by the local dataset writer, its files copied into a bucket of the run's S3Proxy
 * (test/support/s3.ts) and the local copy removed, is read at `s3://BUCKET/PREFIX/kline` by
 * delta-rs and Polars' scan_delta (storage_options: endpoint over plain HTTP, path-style, the
 * server's credentials), by Spark 4.1 with delta-spark through Hadoop's S3A (`s3a://`,
 * hadoop-aws 3.4.2 and the AWS SDK bundle from Maven Central) and by DuckDB 1.4.4's delta
 * extension (an S3 secret; its httpfs and delta extensions from PyPI), at the newest version and
 * by time travel to versions 0 and 1: exactly the committed rows each time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bar } from '../packages/core/src/index.js';
import { bar, eachVersion, expectEachVersion, writeKlineTable } from './support/delta-tables.js';
import { ensurePython, readDatasets } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const T0 = Date.UTC(2026, 0, 30, 14, 30);
const MIN = 60_000;

let dir: string;
let bucket: TestBucket;
beforeAll(async () => {
  ensurePython();
  dir = await mkdtemp(join(tmpdir(), 'qf-delta-s3-'));
  bucket = await freshBucket('delta-readers');
}, 900_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a quoteflow Delta table on S3', () => {
  it('delta-rs, Polars, Spark (S3A) and DuckDB read exactly the committed rows from the bucket, at each version', async () => {
    const commits: Bar[][] = [
      [bar('AAPL.US', 1, T0, 10.5), bar('AAPL.US', 1, T0 + MIN, 10.75), bar('MSFT.US', 1, T0, 400.25)],
      [bar('AAPL.US', 1, T0 + 2 * MIN, 11), bar('AAPL.US', 8, Date.UTC(2026, 1, 2), 12.5)],
      [bar('MSFT.US', 1, T0 + MIN, 401), bar('0700.HK', 1, T0 + 3 * MIN, 380.2)],
    ];
    const log = await writeKlineTable(dir, commits, { snapshotEvery: 2 });
    expect(log.version).toBe(2);

    const keys = await bucket.upload(join(dir, 'kline'), 'research/bars/kline');
    expect(keys).toContain('research/bars/kline/_delta_log/00000000000000000002.json');
    expect(keys.filter((k) => k.endsWith('.parquet')).length).toBeGreaterThanOrEqual(3);
    // Only the bucket holds the table now: a reader that looked on the local disk would fail.
    await rm(join(dir, 'kline'), { recursive: true });

    const path = bucket.url('research/bars/kline');
    const backs = await readDatasets(eachVersion({ path, s3: bucket.server }, [0, 1]));
    expectEachVersion(backs, [0, 1], commits);
  }, 600_000);

  it('a reader given the wrong secret is refused by the server (the reads above are signed)', async () => {
    // A bucket of its own: Spark keeps one S3A file system per bucket, made with the first settings.
    const other = await freshBucket('delta-readers-denied');
    const wrong = { ...other.server, secretAccessKey: 'not-the-secret' };
    for (const reader of ['deltalake', 'spark-delta', 'duckdb-delta'] as const)
      await expect(readDatasets([{ reader, path: other.url('kline'), s3: wrong }]), reader).rejects.toThrow(
        /403|Forbidden|SignatureDoesNotMatch|AccessDenied|signature/i,
      );
  }, 300_000);
});
