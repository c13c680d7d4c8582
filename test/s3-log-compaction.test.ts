/**
 * A table on S3 whose Delta log compaction (`0….<v>.compacted.json`, here every 2 versions) holds
 * the `remove` tombstones of a partition compaction (the files stay until a vacuum): delta-rs,
 * Polars, Spark and DuckDB read each version exactly, the compacted one and those before it included, and
 * quoteflow reopens the table from the log compaction with the same state. The Delta checkpoints
 * written beside them (with the tombstones as `remove` rows) are what delta-rs, Polars and DuckDB
 * read the newest versions from.
 */
import { beforeAll, expect, it } from 'vitest';
import type { Bar } from '../packages/core/src/index.js';
import { compactDataset, DatasetLog, DatasetWriter, type ObjectStore } from '../packages/sinks/src/index.js';
import { openStore } from '../packages/sinks/src/internal.js';
import { bar, commitEach, DELTA_READERS, expected, rowsOf } from './support/delta-tables.js';
import { ensurePython, readDatasets } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const T0 = Date.UTC(2026, 0, 30, 14, 30);
const MIN = 60_000;
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  bucket = await freshBucket('log-compaction');
  Object.assign(process.env, bucket.env());
}, 600_000);

it('a log compaction with remove tombstones reads exactly at every version, by every Delta reader and by quoteflow', async () => {
  const url = bucket.url('t');
  const opened = await openStore(url);
  const before: Bar[][] = [
    [bar('AAPL.US', 1, T0, 10.5), bar('MSFT.US', 1, T0, 400.25)],
    [bar('AAPL.US', 1, T0 + MIN, 10.75)],
    [bar('MSFT.US', 1, T0 + MIN, 401)],
  ];
  const after: Bar[][] = [[bar('AAPL.US', 1, T0 + 2 * MIN, 11)], [bar('AAPL.US', 1, T0 + 3 * MIN, 11.5)]];
  try {
    const store = opened.store!;
    const log = await DatasetLog.open(opened.root, 'kline', { store, snapshotEvery: 2 });
    const writer = new DatasetWriter({ dir: opened.root, encoderThreads: 0, publish: 'on-commit' });
    await commitEach(writer, log, before); // versions 0, 1, 2 (a log compaction at 2)
    const compacted = await compactDataset({ dir: opened.root, dataset: 'kline', store }); // version 3
    expect(compacted).toHaveLength(1);
    await log.refresh();
    await commitEach(writer, log, after); // versions 4 (a log compaction with the tombstones), 5
    await writer.close();
    expect(log.version).toBe(5);
    const keys = await bucket.keys('t/kline/_delta_log/');
    const four = keys.find((k) => k.endsWith('.00000000000000000004.compacted.json'));
    expect(four).toBeDefined();
    expect((await bucket.read(four!)).toString()).toContain('"remove"');
    // The Delta checkpoints beside the log compactions (what delta-rs, Polars and DuckDB open
    // from): the one at 4 is the newest, named by _last_checkpoint, so the reads below go through it.
    expect(keys.filter((k) => k.endsWith('.checkpoint.parquet')).map((k) => k.slice(-39))).toEqual([
      '00000000000000000002.checkpoint.parquet',
      '00000000000000000004.checkpoint.parquet',
    ]);
    expect(JSON.parse((await bucket.read('t/kline/_delta_log/_last_checkpoint')).toString())).toMatchObject({
      version: 4,
    });

    // Reopened from the log compaction at 4: the same files, series and tombstones.
    const again = await DatasetLog.open(opened.root, 'kline', { store });
    expect([...again.files.keys()].sort()).toEqual([...log.files.keys()].sort());
    expect([...again.removed.keys()].sort()).toEqual([...log.removed.keys()].sort());
    expect(again.removed.size).toBe(3);

    const at = [undefined, 1, 3];
    const want = (v: number | undefined): string[] => {
      const all = [...before, ...after];
      if (v === undefined) return expected(all.flat());
      // Version 3 is the compaction: the rows of version 2.
      return expected(all.slice(0, v <= 3 ? Math.min(v, 2) + 1 : v).flat());
    };
    const backs = await readDatasets(
      at.flatMap((version) =>
        DELTA_READERS.map((reader) => ({
          reader,
          path: `${url}/kline`,
          s3: bucket.server,
          ...(version === undefined ? {} : { version }),
        })),
      ),
    );
    for (const [i, back] of backs.entries()) {
      const version = at[Math.floor(i / DELTA_READERS.length)];
      expect(rowsOf(back), `${back.reader} at ${String(version ?? 'newest')}`).toEqual(want(version));
    }
  } finally {
    await opened.close();
  }
}, 600_000);

/** `store` with every key its `list` returned recorded in `listed`. */
function recordingLists(store: ObjectStore, listed: string[]): ObjectStore {
  return {
    kind: store.kind,
    location: store.location,
    read: (key) => store.read(key),
    list: async (prefix, startAfter) => {
      const objects = await store.list(prefix, startAfter);
      listed.push(...objects.map((o) => o.key));
      return objects;
    },
    write: (key, body) => store.write(key, body),
    upload: (key, path) => store.upload(key, path),
    createExclusive: (key, body) => store.createExclusive(key, body),
    delete: (keys) => store.delete(keys),
  };
}

it('opening a table on S3 lists its log from the newest log compaction on, not every commit', async () => {
  const url = bucket.url('long');
  const opened = await openStore(url);
  try {
    const store = opened.store!;
    const log = await DatasetLog.open(opened.root, 'kline', { store, snapshotEvery: 5 });
    const writer = new DatasetWriter({ dir: opened.root, encoderThreads: 0, publish: 'on-commit' });
    const commits = Array.from({ length: 13 }, (_, i) => [bar('AAPL.US', 1, T0 + i * MIN, 10 + i)]);
    await commitEach(writer, log, commits, { series: true }); // versions 0..12, compactions at 5 and 10
    await writer.close();
    expect(log.version).toBe(12);

    const listed: string[] = [];
    const again = await DatasetLog.open(opened.root, 'kline', { store: recordingLists(store, listed) });
    expect(again.version).toBe(12);
    expect([...again.files.keys()].sort()).toEqual([...log.files.keys()].sort());
    expect(again.series).toEqual(log.series);
    const commitVersions = listed
      .map((k) => /\/(\d{20})\.json$/.exec(k)?.[1])
      .filter((v) => v !== undefined)
      .map(Number);
    // Commits 10 (its compaction's own) to 12 and none from 1 to 9: the state up to 10 came from
    // the compaction. Commit 0 shares the compactions' prefix (`0…0.`), so their listing has it.
    expect(commitVersions).toEqual([0, 10, 11, 12]);

    // A refresh after a commit elsewhere lists only what is new.
    const later = new DatasetWriter({ dir: opened.root, encoderThreads: 0, publish: 'on-commit' });
    await commitEach(later, log, [[bar('AAPL.US', 1, T0 + 13 * MIN, 23)]]);
    await later.close();
    listed.length = 0;
    expect(await again.refresh()).toHaveLength(1);
    expect(again.version).toBe(13);
    expect(listed.filter((k) => k.endsWith('.json'))).toEqual([expect.stringMatching(/0{18}13\.json$/)]);
  } finally {
    await opened.close();
  }
}, 120_000);
