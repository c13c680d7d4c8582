import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DatasetLog } from './dataset-log.js';
import { acquirePublishLock } from './internal/publish-lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const STATS = { numRecords: 1, minValues: {}, maxValues: {}, nullCount: {} };

/** Commits `n` checkpoints of one (already published) file each, with one series' watermark. */
async function commitMany(log: DatasetLog, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) {
    await log.transaction((tx) =>
      tx.commit({
        operation: 'checkpoint',
        add: [{ path: `kline/kline_type=1/part-${i}.parquet`, rows: 1, bytes: 10, stats: STATS }],
        // Spelled as logs written before 2026-11 spell series keys: read as 'A.US|1'.
        series: { 'A.US:1': { first: i * 60_000, last: i * 60_000, rows: 1 } },
      }),
    );
  }
}

const commitName = (v: number): string => `${String(v).padStart(20, '0')}.json`;

async function actionsOf(log: DatasetLog, version: number): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(log.logDir, commitName(version)), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('DatasetLog', () => {
  it('folds commits into files and watermarks, and a second reader sees the same', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    expect(log.version).toBe(-1);
    await commitMany(log, 3);
    expect(log.version).toBe(2);
    expect(log.series.get('A.US|1')).toEqual({ first: 0, last: 120_000, rows: 3 });
    const other = await DatasetLog.open(dir, 'kline');
    expect(other.version).toBe(2);
    expect([...other.files.keys()]).toEqual([...log.files.keys()]);
    expect(other.series.get('A.US|1')).toEqual({ first: 0, last: 120_000, rows: 3 });
  });

  it('refreshes a local log it read by the names of the next commits, without listing the directory', async () => {
    const reader = await DatasetLog.open(dir, 'kline');
    const writer = await DatasetLog.open(dir, 'kline');
    await commitMany(writer, 3);
    await reader.refresh();
    const listed = vi.spyOn(reader.store, 'list');
    await commitMany(writer, 2, 3);
    await reader.refresh();
    expect(reader.version).toBe(4);
    expect(reader.series.get('A.US|1')).toEqual({ first: 0, last: 240_000, rows: 5 });
    await reader.refresh(); // nothing new
    expect(reader.version).toBe(4);
    expect(listed).not.toHaveBeenCalled();
    // Further behind than a probe goes: listed.
    await commitMany(writer, 70, 5);
    await reader.refresh();
    expect(reader.version).toBe(74);
    expect(listed).toHaveBeenCalled();
  });

  it('reads a local log whose commits after its version expired from the newest checkpoint', async () => {
    const reader = await DatasetLog.open(dir, 'kline');
    const writer = await DatasetLog.open(dir, 'kline');
    await commitMany(writer, 2);
    await reader.refresh();
    await commitMany(writer, 3, 2);
    expect(await writer.checkpoint()).toBe(4);
    for (const v of [0, 1, 2, 3]) await rm(join(dir, 'kline', '_delta_log', commitName(v)));
    await reader.refresh();
    expect(reader.version).toBe(4);
    expect([...reader.files.keys()]).toEqual([...writer.files.keys()]);
    expect(reader.series.get('A.US|1')).toEqual({ first: 0, last: 240_000, rows: 5 });
  });

  it('writes Delta commits: protocol and metaData first, add with partition values and stats, watermarks as domainMetadata', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    await commitMany(log, 2);
    const [v0, v1] = [await actionsOf(log, 0), await actionsOf(log, 1)];
    expect(Object.keys(v0[0]!)).toEqual(['commitInfo']);
    expect(v0[1]).toEqual({
      protocol: {
        minReaderVersion: 1,
        minWriterVersion: 7,
        writerFeatures: ['domainMetadata', 'invariants'],
      },
    });
    const meta = (v0[2] as { metaData: { partitionColumns: string[]; schemaString: string } }).metaData;
    expect(meta.partitionColumns).toEqual(['kline_type']);
    const schema = JSON.parse(meta.schemaString) as { fields: { name: string; type: unknown }[] };
    expect(schema.fields.map((f) => [f.name, f.type])).toContainEqual(['ts', 'timestamp']);
    expect(schema.fields.at(-1)).toMatchObject({ name: 'kline_type', type: 'integer' });
    expect(v1.map((a) => Object.keys(a)[0])).toEqual(['commitInfo', 'add', 'domainMetadata']);
    expect(v1[1]).toMatchObject({
      add: {
        path: 'kline_type=1/part-1.parquet',
        partitionValues: { kline_type: '1' },
        size: 10,
        dataChange: true,
      },
    });
    expect(JSON.parse((v1[1] as { add: { stats: string } }).add.stats)).toEqual(STATS);
    expect(v1[2]).toEqual({
      domainMetadata: {
        domain: 'quoteflow.series.A.US|1',
        configuration: JSON.stringify({ first: 0, last: 60_000, rows: 2 }),
        removed: false,
      },
    });
  });

  it('writes the whole state as a log compaction every N versions; a fresh reader starts there, one behind reads on', async () => {
    const writer = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    const behind = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    await commitMany(writer, 2);
    await behind.refresh();
    expect(behind.version).toBe(1);
    await commitMany(writer, 21, 2);
    const names = await readdir(writer.logDir);
    expect(names.filter((n) => n.endsWith('.compacted.json'))).toEqual([
      '00000000000000000000.00000000000000000015.compacted.json',
      '00000000000000000000.00000000000000000020.compacted.json',
    ]);
    expect(names).toContain(commitName(3)); // Delta commits stay: readers without log compaction need them
    await behind.refresh();
    expect(behind.version).toBe(22);
    expect(behind.files.size).toBe(23);
    expect(behind.series.get('A.US|1')).toEqual({ first: 0, last: 22 * 60_000, rows: 23 });
    // A fresh reader reads the compaction and versions 21 and 22 only: a version before it that
    // cannot be parsed does not stop it.
    await writeFile(join(writer.logDir, commitName(3)), 'not json');
    const fresh = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    expect(fresh.version).toBe(22);
    expect(fresh.series.get('A.US|1')).toEqual(behind.series.get('A.US|1'));
    expect([...fresh.files.keys()].sort()).toEqual([...behind.files.keys()].sort());
  });

  it('adopts files on disk that no commit names, with what summarize reads from them', async () => {
    await mkdir(join(dir, 'kline/kline_type=1'), { recursive: true });
    await writeFile(join(dir, 'kline/kline_type=1/part-old.ndjson'), '{}\n');
    const log = await DatasetLog.open(dir, 'kline', {
      summarize: async () => ({ rows: 7, series: { 'B.US|1': { first: 1, last: 9, rows: 7 } } }),
    });
    await log.transaction(async () => undefined, { adoptOrphans: true });
    expect(log.files.get('kline/kline_type=1/part-old.ndjson')?.rows).toBe(7);
    expect(log.series.get('B.US|1')).toEqual({ first: 1, last: 9, rows: 7 });
    // Adopted once: the next transaction commits nothing.
    const version = log.version;
    await log.transaction(async () => undefined, { adoptOrphans: true });
    expect(log.version).toBe(version);
  });

  it('publishes a compaction a killed writer committed before adopting: the files it replaced are not adopted', async () => {
    const partition = 'kline/kline_type=1/month=2026-01';
    await mkdir(join(dir, partition), { recursive: true });
    for (const name of ['a.ndjson', 'b.ndjson']) await writeFile(join(dir, partition, name), '{}\n');
    const log = await DatasetLog.open(dir, 'kline');
    await log.transaction(async () => undefined, { adoptOrphans: true });
    expect([...log.files.keys()].sort()).toEqual([`${partition}/a.ndjson`, `${partition}/b.ndjson`]);
    // What a compaction killed between its commit and its swap leaves: the commit, the built directory.
    const staged = '.staging/host~999999~compact-dead.ready.tmp';
    await mkdir(join(dir, staged), { recursive: true });
    await writeFile(join(dir, staged, 'c.ndjson'), '{}\n{}\n');
    const file = (name: string, removed: boolean) => ({
      domainMetadata: {
        domain: `quoteflow.file.${partition}/${name}`,
        configuration: removed ? '{}' : '{"rows":2,"bytes":6}',
        removed,
      },
    });
    const commit = [
      {
        commitInfo: {
          timestamp: Date.now(),
          quoteflow: { operation: 'compact', writer: 'host~999999~dead', swap: { partition, staged } },
        },
      },
      file('c.ndjson', false),
      file('a.ndjson', true),
      file('b.ndjson', true),
    ];
    await writeFile(
      join(log.logDir, commitName(log.version + 1)),
      commit.map((a) => JSON.stringify(a)).join('\n'),
    );
    const next = await DatasetLog.open(dir, 'kline');
    await next.transaction(async () => undefined, { adoptOrphans: true });
    expect(next.version).toBe(log.version + 1); // no adopt commit of a.ndjson and b.ndjson
    expect([...next.files.keys()]).toEqual([`${partition}/c.ndjson`]);
    expect(await readdir(join(dir, partition))).toEqual(['c.ndjson']);
  });

  it('refuses a malformed version loudly, naming the file', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    await commitMany(log, 1);
    await writeFile(join(log.logDir, commitName(1)), '{"add": ');
    await expect(DatasetLog.open(dir, 'kline')).rejects.toMatchObject({
      code: 'QF_DATASET_LOG',
      message: expect.stringContaining(`${commitName(1)} is not a Delta commit`),
    });
  });

  it('refuses a table whose protocol asks for features it does not implement, before any write', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    await commitMany(log, 1);
    const protocol = {
      protocol: {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors'],
      },
    };
    await writeFile(join(log.logDir, commitName(1)), `${JSON.stringify(protocol)}\n`);
    await expect(DatasetLog.open(dir, 'kline')).rejects.toMatchObject({
      code: 'QF_DATASET_LOG',
      message: expect.stringContaining('reader version 3'),
    });
  });

  it('of two writers that both take version N (a broken lock), the second fails QF_LOCKED and commits nothing', async () => {
    const a = await DatasetLog.open(dir, 'kline');
    const b = await DatasetLog.open(dir, 'kline');
    await commitMany(a, 1);
    // b has not read version 0: its commit races for the same version.
    await expect(
      (b as unknown as { commit: (c: unknown) => Promise<unknown> }).commit({
        operation: 'checkpoint',
        add: [{ path: 'kline/kline_type=1/other.parquet', rows: 1, bytes: 1, stats: STATS }],
      }),
    ).rejects.toMatchObject({ code: 'QF_LOCKED' });
    const fresh = await DatasetLog.open(dir, 'kline');
    expect([...fresh.files.keys()]).toEqual(['kline/kline_type=1/part-0.parquet']);
  });
});

describe('acquirePublishLock', () => {
  it('is exclusive: a second taker waits until the first releases', async () => {
    const path = join(dir, '.lock');
    const first = await acquirePublishLock(path);
    let second = false;
    const waiting = acquirePublishLock(path).then((l) => {
      second = true;
      return l;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(second).toBe(false);
    await first.release();
    await (await waiting).release();
    expect(second).toBe(true);
  });

  it('breaks the lock of a dead process of this host at once, and one past its expiry', async () => {
    const path = join(dir, '.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid!;
    await writeFile(
      path,
      JSON.stringify({ owner: 'x', host: hostname(), pid: dead, expiresAtMs: Date.now() + 3_600_000 }),
    );
    await (await acquirePublishLock(path, { timeoutMs: 0 })).release();
    await writeFile(
      path,
      JSON.stringify({ owner: 'y', host: 'elsewhere', pid: 1, expiresAtMs: Date.now() - 1 }),
    );
    await (await acquirePublishLock(path, { timeoutMs: 0 })).release();
  });

  it('gives up with QF_LOCKED naming the holder when a live holder keeps it', async () => {
    const path = join(dir, '.lock');
    await writeFile(
      path,
      JSON.stringify({ owner: 'z', host: hostname(), pid: process.pid, expiresAtMs: Date.now() + 3_600_000 }),
    );
    await expect(acquirePublishLock(path, { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'QF_LOCKED',
      message: expect.stringContaining(`held by process ${process.pid}`),
    });
  });
});
