/**
 * Delta checkpoints on S3: a table of 103 versions committed to the run's S3Proxy gets a classic
 * checkpoint (`<100>.checkpoint.parquet`) and `_last_checkpoint` at version 100 (the default
 * cadence, with the log compaction). delta-rs, Polars, Spark and DuckDB read it exactly at the
 * newest version and by time travel to versions before and after the checkpoint; a copy of the
 * table without the commits before the checkpoint (and without the log compaction) is still read
 * exactly by each of them, which only the checkpoint makes possible.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, expect, it } from 'vitest';
import type { Bar } from '../packages/core/src/index.js';
import { DatasetLog, DatasetWriter } from '../packages/sinks/src/index.js';
import { openStore } from '../packages/sinks/src/internal.js';
import { bar, commitEach, DELTA_READERS, expected, rowsOf } from './support/delta-tables.js';
import { ensurePython, readDatasets } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const VERSIONS = 103;
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  bucket = await freshBucket('checkpoint');
  Object.assign(process.env, bucket.env());
}, 600_000);

/** Copies the table under `from` to `to` in the bucket, leaving out the keys `skip` names. */
async function copyTable(from: string, to: string, skip: (name: string) => boolean): Promise<void> {
  for (const key of await bucket.keys(`${from}/`)) {
    if (skip(key.slice(from.length + 1))) continue;
    const body = await bucket.read(key);
    await bucket.client.send(
      new PutObjectCommand({ Bucket: bucket.name, Key: `${to}/${key.slice(from.length + 1)}`, Body: body }),
    );
  }
}

it('a table of 103 versions on S3 has a Delta checkpoint at 100 that every Delta reader reads exactly', async () => {
  const url = bucket.url('t');
  const opened = await openStore(url);
  // One bar a version, in two series, so every version holds different rows.
  const commits: Bar[][] = Array.from({ length: VERSIONS }, (_, i) => [
    bar(i % 2 === 0 ? 'AAPL.US' : 'MSFT.US', 1, T0 + i * MIN, 10 + i / 4),
  ]);
  try {
    const store = opened.store!;
    const log = await DatasetLog.open(opened.root, 'kline', { store });
    const writer = new DatasetWriter({ dir: opened.root, encoderThreads: 0, publish: 'on-commit' });
    await commitEach(writer, log, commits, { series: true });
    await writer.close();
    expect(log.version).toBe(VERSIONS - 1);

    const names = (await bucket.keys('t/kline/_delta_log/')).map((k) =>
      k.slice('t/kline/_delta_log/'.length),
    );
    expect(names).toContain('00000000000000000100.checkpoint.parquet');
    expect(names.filter((n) => n.includes('checkpoint.parquet'))).toHaveLength(1);
    const last = JSON.parse((await bucket.read('t/kline/_delta_log/_last_checkpoint')).toString()) as Record<
      string,
      number
    >;
    // protocol, metaData, 101 adds, 2 series domains.
    expect(last).toMatchObject({ version: 100, size: 105, numOfAddFiles: 101 });

    // Without the commits before the checkpoint and the log compaction: only the checkpoint says
    // what versions 0 to 100 hold.
    await copyTable('t/kline', 'copy/kline', (name) => {
      const m = /^_delta_log\/(\d{20})\.json$/.exec(name);
      return (m !== null && Number(m[1]) <= 100) || name.endsWith('.compacted.json');
    });
    const copyNames = await bucket.keys('copy/kline/_delta_log/');
    expect(copyNames.filter((k) => k.endsWith('.json'))).toEqual([
      'copy/kline/_delta_log/00000000000000000101.json',
      'copy/kline/_delta_log/00000000000000000102.json',
    ]);

    const at = [undefined, 50, 101];
    const requests = [
      ...at.flatMap((version) =>
        DELTA_READERS.map((reader) => ({
          reader,
          path: `${url}/kline`,
          s3: bucket.server,
          ...(version === undefined ? {} : { version }),
        })),
      ),
      ...DELTA_READERS.map((reader) => ({ reader, path: bucket.url('copy/kline'), s3: bucket.server })),
    ];
    const backs = await readDatasets(requests);
    for (const [i, back] of backs.entries()) {
      const version = at[Math.floor(i / DELTA_READERS.length)];
      const what =
        i >= at.length * DELTA_READERS.length
          ? 'the copy without commits 0-100'
          : String(version ?? 'newest');
      const want = commits.slice(0, version === undefined ? VERSIONS : version + 1).flat();
      expect(rowsOf(back), `${back.reader} at ${what}`).toEqual(expected(want));
    }
  } finally {
    await opened.close();
  }
}, 900_000);
