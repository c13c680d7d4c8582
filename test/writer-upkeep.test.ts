/**
 * Table upkeep inside `DatasetWriter`, the writer of the depth and suspension tables (`depth`,
 * `suspensions --watch --out`, `run`): many small files, one commit each, are compacted in the
 * background while it writes, and delta-rs reads every row once: locally after each round and, on
 * object storage (where removed files stay until the retention), at every version of the log.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../packages/core/src/index.js';
import { DatasetLog, DatasetWriter, TableUpkeep, type UpkeepEvent } from '../packages/sinks/src/index.js';
import { openStore } from '../packages/sinks/src/internal.js';
import { depth, suspension } from '../packages/sinks/test-support/test-records.js';
import { expectNoneTwice } from './support/crash-bars.js';
import { ensurePython, readDatasets, type ReadBack, type ReadRequest } from './support/python.js';
import { freshBucket, type TestBucket } from './support/s3.js';

const DAY = Date.UTC(2026, 0, 5);
const CODES = ['AAPL.US', 'MSFT.US', 'TSLA.US'];
const ROUNDS = 24;
let work: string;
let bucket: TestBucket;

beforeAll(async () => {
  ensurePython();
  work = await mkdtemp(join(tmpdir(), 'qf-writer-upkeep-'));
  bucket = await freshBucket('writer-upkeep');
  Object.assign(process.env, bucket.env());
}, 600_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Round `i`'s depth ticks: one per code, all on 2026-01-05 (UTC). */
const ticksOf = (i: number) =>
  CODES.map((code) => depth(code, BigInt(i + 1), DAY + 3_600_000 + i * 1000, [], []));
const depthRow = (r: Record<string, unknown>): string => `${String(r.code)} ${String(r.seq)}`;
const depthRows = (rounds: number): string[] =>
  Array.from({ length: rounds }, (_, i) => ticksOf(i).map((t) => `${t.code} ${String(t.seq)}`)).flat();

/** The data files the table's newest version names. */
async function liveFiles(dir: string, dataset: 'depth' | 'suspension'): Promise<string[]> {
  const log = await DatasetLog.open(dir, dataset);
  return [...log.files.keys()];
}

const sorted = (rows: readonly string[]): string[] => [...rows].sort();

/** delta-rs' rows of a table, as `row` words them, at the newest version or each of `versions`. */
async function deltaRows(
  table: string,
  row: (r: Record<string, unknown>) => string,
  versions: readonly (number | undefined)[] = [undefined],
  s3?: ReadRequest['s3'],
): Promise<string[][]> {
  const backs: ReadBack[] = await readDatasets(
    versions.map((version) => ({
      reader: 'deltalake' as const,
      path: table,
      ...(s3 === undefined ? {} : { s3 }),
      ...(version === undefined ? {} : { version }),
    })),
  );
  return backs.map((b) => b.rows.map(row));
}

describe('DatasetWriter keeps its tables healthy while it writes', () => {
  it('compacts many small depth files of the day being written: fewer files, every tick once at each round', async () => {
    const dir = join(work, 'depth');
    const events: UpkeepEvent[] = [];
    // The writer's clock is on the day its ticks are stamped: the partition is being written.
    const writer = new DatasetWriter({
      dir,
      encoderThreads: 0,
      clock: new ManualClock(DAY + 12 * 3_600_000),
      upkeep: { rowsPerFile: 1_000 },
      onUpkeep: (e) => events.push(e),
    });
    for (let i = 0; i < ROUNDS; i++) {
      await writer.write(ticksOf(i));
      await writer.flush();
      await writer.upkeepIdle();
      const [rows] = await deltaRows(join(dir, 'depth'), depthRow);
      expectNoneTwice(rows!, `depth after round ${i}`);
      expect(sorted(rows!), `depth after round ${i}`).toEqual(sorted(depthRows(i + 1)));
    }
    const files = await liveFiles(dir, 'depth');
    await writer.close();
    // 24 files of 3 rows, tiered by four: six merges of tier 0, one of tier 1, leaving three files.
    expect(files.every((f) => f.startsWith('depth/date=2026-01-05/'))).toBe(true);
    expect(files.length).toBeLessThanOrEqual(6);
    expect(events.filter((e) => e.type === 'compacted').length).toBeGreaterThanOrEqual(6);
    expect(events.some((e) => e.type === 'checkpointed' && e.dataset === 'depth')).toBe(true);
    const [rows] = await deltaRows(join(dir, 'depth'), depthRow);
    expect(sorted(rows!)).toEqual(sorted(depthRows(ROUNDS)));
    // Upkeep was closed before the claims were given up: no merge left half-built in staging.
    expect(await readdir(dir)).not.toContain('.staging');
  });

  it('merges a closed depth day whole once the clock is past it (the next UTC day)', async () => {
    const dir = join(work, 'depth-closed');
    const writer = new DatasetWriter({
      dir,
      encoderThreads: 0,
      clock: new ManualClock(DAY + 24 * 3_600_000),
      upkeep: { rowsPerFile: 1_000 },
    });
    for (let i = 0; i < 3; i++) {
      await writer.write(ticksOf(i));
      await writer.flush();
    }
    await writer.upkeepIdle();
    expect(await liveFiles(dir, 'depth')).toHaveLength(1);
    await writer.close();
    const [rows] = await deltaRows(join(dir, 'depth'), depthRow);
    expect(sorted(rows!)).toEqual(sorted(depthRows(3)));
  });

  it('compacts the suspension table on S3: at every version delta-rs reads each record once', async () => {
    const dir = bucket.url('susp');
    const writer = new DatasetWriter({ dir, encoderThreads: 0, upkeep: { rowsPerFile: 1_000 } });
    const symbols: string[] = [];
    for (let i = 0; i < 16; i++) {
      const batch = [`S${i}A`, `S${i}B`];
      symbols.push(...batch);
      await writer.write(batch.map((s) => suspension(s)));
      await writer.flush();
    }
    await writer.upkeepIdle();
    await writer.close();
    // 16 files of 2 rows in `exchange=nyse` (never closed): tiered by four, at most three left.
    const opened = await openStore(dir);
    try {
      const log = await DatasetLog.open(opened.root, 'suspension', { store: opened.store! });
      expect(log.files.size).toBeLessThanOrEqual(3);
    } finally {
      await opened.close();
    }
    const versions = (await bucket.keys('susp/suspension/_delta_log/')).flatMap((k) => {
      const m = /(\d{20})\.json$/.exec(k);
      return m === null ? [] : [Number(m[1])];
    });
    const [newest, ...each] = await deltaRows(
      bucket.url('susp/suspension'),
      (r) => String(r.symbol),
      [undefined, ...versions],
      bucket.server,
    );
    expect(sorted(newest!)).toEqual(sorted(symbols));
    // Each version holds the records committed by then, each once (a merge changes no row).
    let seen = 0;
    for (const [i, rows] of each.entries()) {
      expectNoneTwice(rows, `suspension at version ${versions[i]}`);
      expect(rows.length).toBeGreaterThanOrEqual(seen);
      seen = rows.length;
    }
    expect(seen).toBe(symbols.length);
  });
  it('keeps an hour of log on S3 by default: the versions before a checkpoint written two hours ago go, the table reads the same', async () => {
    const dir = bucket.url('susp-log');
    const writer = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
    const symbols = Array.from({ length: 6 }, (_, i) => `L${i}`);
    for (const symbol of symbols) {
      await writer.write([suspension(symbol)]);
      await writer.flush();
    }
    await writer.close();
    const logKey = 'susp-log/suspension/_delta_log/';
    const commits = async (): Promise<number[]> =>
      (await bucket.keys(logKey)).flatMap((k) => {
        const m = /(\d{20})\.json$/.exec(k);
        return m === null ? [] : [Number(m[1])];
      });
    const before = await commits();
    expect(before.length).toBeGreaterThanOrEqual(symbols.length);
    // Upkeep rounds as if two hours had passed since the log was written (object stamps are the
    // server's, so upkeep's wall clock moves instead): the first writes the checkpoint, the second
    // judges the log against it.
    const upkeepAt = async (
      aheadMs: number,
      options: { logRetentionMs?: number } = {},
    ): Promise<UpkeepEvent[]> => {
      const events: UpkeepEvent[] = [];
      const opened = await openStore(dir);
      try {
        const upkeep = await TableUpkeep.open({
          root: opened.root,
          dataset: 'suspension',
          store: opened.store!,
          wall: new ManualClock(Date.now() + aheadMs),
          onEvent: (e) => events.push(e),
          ...options,
        });
        upkeep.nudge();
        await upkeep.idle();
        await upkeep.close();
      } finally {
        await opened.close();
      }
      return events;
    };
    await upkeepAt(0);
    const checkpointed = await commits();
    // Three hours of log asked for: nothing goes.
    await upkeepAt(2 * 3_600_000, { logRetentionMs: 3 * 3_600_000 });
    expect(await commits()).toEqual(checkpointed);
    // The default (an hour, not the removed files' 7 days): everything before the checkpoint goes.
    const events = await upkeepAt(2 * 3_600_000);
    expect(events).toContainEqual(expect.objectContaining({ type: 'log-expired', dataset: 'suspension' }));
    const left = await commits();
    const checkpoints = (await bucket.keys(logKey)).filter((k) => k.endsWith('.checkpoint.parquet'));
    const newestCheckpoint = Math.max(...checkpoints.map((k) => Number(/(\d{20})\.checkpoint/.exec(k)![1])));
    expect(Math.min(...left)).toBe(newestCheckpoint);
    const [rows] = await deltaRows(
      bucket.url('susp-log/suspension'),
      (r) => String(r.symbol),
      [undefined],
      bucket.server,
    );
    expect(sorted(rows!)).toEqual(sorted(symbols));
  });
});
