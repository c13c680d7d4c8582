import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatasetLog } from './dataset-log.js';
import { acquirePublishLock } from './internal/publish-lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Commits `n` checkpoints of one (already published) file each, with one series' watermark. */
async function commitMany(log: DatasetLog, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) {
    await log.transaction((tx) =>
      tx.commit({
        operation: 'checkpoint',
        add: [{ path: `kline/kline_type=1/part-${i}.parquet`, rows: 1, bytes: 10 }],
        // Spelled as logs written before 2026-11 spell series keys: read as 'A.US|1'.
        series: { 'A.US:1': { first: i * 60_000, last: i * 60_000, rows: 1 } },
      }),
    );
  }
}

describe('DatasetLog', () => {
  it('folds commits into files and watermarks, and a second reader sees the same', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    await commitMany(log, 3);
    expect(log.version).toBe(3);
    expect(log.series.get('A.US|1')).toEqual({ first: 0, last: 120_000, rows: 3 });
    const other = await DatasetLog.open(dir, 'kline');
    expect(other.version).toBe(3);
    expect([...other.files.keys()]).toEqual([...log.files.keys()]);
    expect(other.series.get('A.US|1')).toEqual({ first: 0, last: 120_000, rows: 3 });
  });

  it('snapshots every N versions and prunes older entries; a reader behind the prune starts from the snapshot', async () => {
    const writer = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    const behind = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    await commitMany(writer, 2);
    await behind.refresh();
    expect(behind.version).toBe(2);
    await commitMany(writer, 21, 2);
    const names = await readdir(writer.logDir);
    expect(names.filter((n) => n.endsWith('.snapshot.json'))).toEqual([
      '00000000000000000015.snapshot.json',
      '00000000000000000020.snapshot.json',
    ]);
    expect(names).not.toContain('00000000000000000003.json'); // pruned
    await behind.refresh();
    expect(behind.version).toBe(23);
    expect(behind.files.size).toBe(23);
    expect(behind.series.get('A.US|1')).toEqual({ first: 0, last: 22 * 60_000, rows: 23 });
    const fresh = await DatasetLog.open(dir, 'kline', { snapshotEvery: 5 });
    expect(fresh.series.get('A.US|1')).toEqual(behind.series.get('A.US|1'));
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
    for (const name of ['a.parquet', 'b.parquet']) await writeFile(join(dir, partition, name), 'x');
    const log = await DatasetLog.open(dir, 'kline');
    await log.transaction(async () => undefined, { adoptOrphans: true });
    expect([...log.files.keys()].sort()).toEqual([`${partition}/a.parquet`, `${partition}/b.parquet`]);
    // What a compaction killed between its commit and its swap leaves: the entry, the built directory.
    const staged = '.staging/host~999999~compact-dead.ready.tmp';
    await mkdir(join(dir, staged), { recursive: true });
    await writeFile(join(dir, staged, 'c.parquet'), 'xx');
    const entry = {
      version: log.version + 1,
      committedAt: new Date().toISOString(),
      writer: 'host~999999~dead',
      operation: 'compact',
      add: [{ path: `${partition}/c.parquet`, rows: 2, bytes: 2 }],
      remove: [`${partition}/a.parquet`, `${partition}/b.parquet`],
      swap: { partition, staged },
    };
    await writeFile(
      join(log.logDir, `${String(entry.version).padStart(20, '0')}.json`),
      JSON.stringify(entry),
    );
    const next = await DatasetLog.open(dir, 'kline');
    await next.transaction(async () => undefined, { adoptOrphans: true });
    expect(next.version).toBe(entry.version); // no adopt commit of a.parquet and b.parquet
    expect([...next.files.keys()]).toEqual([`${partition}/c.parquet`]);
    expect(await readdir(join(dir, partition))).toEqual(['c.parquet']);
  });

  it('refuses a malformed version loudly, naming the file', async () => {
    const log = await DatasetLog.open(dir, 'kline');
    await commitMany(log, 1);
    await writeFile(join(log.logDir, '00000000000000000002.json'), '{"version": 2}');
    await expect(DatasetLog.open(dir, 'kline')).rejects.toMatchObject({
      code: 'QF_DATASET_LOG',
      message: expect.stringContaining('00000000000000000002.json is not a quoteflow commit'),
    });
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
