/**
 * The Delta checkpoint a remote table gets with each log compaction, read back with hyparquet (an
 * independent Parquet reader, no parquet-rs code): the protocol's checkpoint schema (one struct
 * column per action type, maps of strings, 64-bit integers) and one row per action of the state.
 * The store here is the local one presented as remote (the real S3 path, S3Proxy and the Delta
 * readers, is test/delta-checkpoint-s3.test.ts).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DatasetLog } from '../dataset-log.js';
import { LocalStore } from '../storage/local-store.js';
import type { ObjectStore } from '../storage/object-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-ckpt-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const STATS = {
  numRecords: 1,
  minValues: { code: 'A.US' },
  maxValues: { code: 'A.US' },
  nullCount: { code: 0 },
};

/** A local store that says it is remote; `failOn` makes writes of matching keys fail. */
function remoteStore(root: string, failOn?: RegExp): ObjectStore {
  const local = new LocalStore(root);
  return {
    kind: 's3',
    location: `remote:${root}`,
    read: (key) => local.read(key),
    list: (prefix, after) => local.list(prefix, after),
    write: async (key, body) => {
      if (failOn?.test(key) === true) throw new Error(`refused ${key}`);
      await local.write(key, body);
    },
    upload: (key, path) => local.upload(key, path),
    createExclusive: (key, body) => local.createExclusive(key, body),
    delete: (keys) => local.delete(keys),
  };
}

async function commitThree(log: DatasetLog): Promise<void> {
  for (let i = 0; i < 3; i++)
    await log.transaction((tx) =>
      tx.commit({
        operation: 'checkpoint',
        add: [
          {
            path: `kline/kline_type=1/month=2026-01/part-${i}.parquet`,
            rows: 1,
            bytes: 10 + i,
            stats: STATS,
          },
        ],
        series: { 'A.US|1': { first: i * 60_000, last: i * 60_000, rows: 1 } },
      }),
    );
}

const LOG = join('kline', '_delta_log');
const CHECKPOINT = '00000000000000000002.checkpoint.parquet';

it('a remote table gets a checkpoint in the protocol schema holding the whole state, then _last_checkpoint', async () => {
  const log = await DatasetLog.open(dir, 'kline', { store: remoteStore(dir), snapshotEvery: 2 });
  await commitThree(log);
  const bytes = await readFile(join(dir, LOG, CHECKPOINT));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const metadata = parquetMetadata(file);
  const schema = parquetSchema(metadata);
  expect(schema.children.map((c) => c.element.name)).toEqual([
    'txn',
    'add',
    'remove',
    'metaData',
    'protocol',
    'domainMetadata',
  ]);
  const add = schema.children.find((c) => c.element.name === 'add')!;
  expect(add.children.map((c) => c.element.name)).toEqual([
    'path',
    'partitionValues',
    'size',
    'modificationTime',
    'dataChange',
    'stats',
    'tags',
  ]);
  expect(add.children[1]!.element.converted_type).toBe('MAP');
  expect(add.children[2]!.element.type).toBe('INT64');

  const rows = (await parquetReadObjects({
    file,
    compressors: { ZSTD: (input) => new Uint8Array(zstdDecompressSync(input)) },
  })) as Record<string, Record<string, unknown> | null>[];
  // Each row sets exactly one action.
  for (const r of rows) expect(Object.values(r).filter((v) => v !== null && v !== undefined)).toHaveLength(1);
  expect(rows.map((r) => Object.keys(r).find((k) => r[k] !== null && r[k] !== undefined))).toEqual([
    'protocol',
    'metaData',
    'add',
    'add',
    'add',
    'domainMetadata',
  ]);
  expect(rows[0]!.protocol).toMatchObject({
    minReaderVersion: 1,
    minWriterVersion: 7,
    writerFeatures: ['domainMetadata', 'invariants'],
  });
  expect(rows[1]!.metaData).toMatchObject({ format: { provider: 'parquet' } });
  expect(JSON.parse(String(rows[1]!.metaData!.schemaString))).toMatchObject({ type: 'struct' });
  const adds = rows.slice(2, 5).map((r) => r.add!);
  expect(adds.map((a) => a.path)).toEqual(
    [0, 1, 2].map((i) => `kline_type=1/month=2026-01/part-${i}.parquet`),
  );
  expect(adds[2]).toMatchObject({
    partitionValues: { kline_type: '1', month: '2026-01' },
    dataChange: false,
  });
  expect(Number(adds[2]!.size)).toBe(12);
  expect(JSON.parse(String(adds[2]!.stats))).toEqual(STATS);
  expect(rows[5]!.domainMetadata).toEqual({
    domain: 'quoteflow.series.A.US|1',
    configuration: JSON.stringify({ first: 0, last: 120_000, rows: 3 }),
    removed: false,
  });

  const last = JSON.parse(await readFile(join(dir, LOG, '_last_checkpoint'), 'utf8')) as unknown;
  expect(last).toEqual({ version: 2, size: 6, sizeInBytes: bytes.length, numOfAddFiles: 3 });
});

it('a checkpoint that cannot be written is reported and the commit stands; a local table gets none', async () => {
  const errors: Error[] = [];
  const store = remoteStore(dir, /checkpoint\.parquet$/);
  const log = await DatasetLog.open(dir, 'kline', {
    store,
    snapshotEvery: 2,
    onCheckpointError: (e) => errors.push(e),
  });
  await commitThree(log);
  expect(log.version).toBe(2);
  expect(errors).toHaveLength(1);
  expect(errors[0]!.message).toMatch(/checkpoint of version 2 could not be written.*refused/);
  const names = await readdir(join(dir, LOG));
  expect(names).not.toContain('_last_checkpoint');
  expect(names).toContain('00000000000000000002.json');
  const again = await DatasetLog.open(dir, 'kline', { store });
  expect(again.version).toBe(2);
  expect(again.files.size).toBe(3);

  const local = join(dir, 'local');
  const localLog = await DatasetLog.open(local, 'kline', { snapshotEvery: 2 });
  await commitThree(localLog);
  const localNames = await readdir(join(local, LOG));
  expect(localNames.filter((n) => n.includes('checkpoint'))).toEqual([]);
  expect(localNames.filter((n) => n.endsWith('.compacted.json'))).toHaveLength(1);
});

it('a log whose commits before a checkpoint expired is read from it: files, tombstones, series, and commits go on', async () => {
  const store = remoteStore(dir);
  const log = await DatasetLog.open(dir, 'kline', { store, snapshotEvery: 5 });
  await commitThree(log);
  await log.transaction((tx) =>
    tx.commit({ operation: 'compact', add: [], remove: ['kline/kline_type=1/month=2026-01/part-0.parquet'] }),
  );
  expect(await log.checkpoint()).toBe(3);
  for (const v of [0, 1, 2]) await rm(join(dir, LOG, `${String(v).padStart(20, '0')}.json`));
  const again = await DatasetLog.open(dir, 'kline', { store, snapshotEvery: 5 });
  expect(again.version).toBe(3);
  expect([...again.files.keys()]).toEqual([...log.files.keys()]);
  expect([...again.removed.keys()]).toEqual(['kline/kline_type=1/month=2026-01/part-0.parquet']);
  expect(again.series.get('A.US|1')).toEqual({ first: 0, last: 120_000, rows: 3 });
  // Its 64-bit numbers came back as numbers: the log compaction at version 5 is JSON again.
  await commitThree(again);
  const compaction = await readFile(
    join(dir, LOG, `${'0'.repeat(20)}.${String(5).padStart(20, '0')}.compacted.json`),
    'utf8',
  );
  expect(compaction).toContain('"size":10');
  expect((await DatasetLog.open(dir, 'kline', { store })).version).toBe(6);
});

it('a local log remembers no removed file (its compaction deleted them at once); one on object storage keeps them for vacuum', async () => {
  const removed = async (root: string, store?: ObjectStore): Promise<string[]> => {
    const log = await DatasetLog.open(root, 'kline', store === undefined ? {} : { store });
    await commitThree(log);
    await log.transaction((tx) =>
      tx.commit({
        operation: 'compact',
        add: [],
        remove: ['kline/kline_type=1/month=2026-01/part-0.parquet'],
      }),
    );
    const again = await DatasetLog.open(root, 'kline', store === undefined ? {} : { store });
    expect([...again.files.keys()]).toEqual([...log.files.keys()]);
    expect([...again.files.keys()]).not.toContain('kline/kline_type=1/month=2026-01/part-0.parquet');
    return [...log.removed.keys(), ...again.removed.keys()];
  };
  expect(await removed(join(dir, 'local'))).toEqual([]);
  expect(await removed(join(dir, 'remote'), remoteStore(join(dir, 'remote')))).toEqual([
    'kline/kline_type=1/month=2026-01/part-0.parquet',
    'kline/kline_type=1/month=2026-01/part-0.parquet',
  ]);
});
