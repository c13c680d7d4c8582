import { mkdtemp, mkdir, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ParquetFile, readParquet } from 'parquet-wasm';
import { tableFromIPC } from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DatasetWriter } from './dataset-writer.js';
import type { DatasetWriterOptions } from './dataset-writer-options.js';
import { FileSinkError } from './file-sink-error.js';
import { ManualClock, type Level } from '@quoteflow/core';
import {
  bar,
  barUpdate,
  depth,
  level,
  suspension,
  warmEncoderThread,
} from '../../test-support/test-records.js';

let dir: string;

beforeAll(warmEncoderThread, 120_000);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-writer-'));
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

/** The files under `root`, but the tables' Delta logs. */
async function walk(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    const path = relative(root, join(e.parentPath, e.name));
    if (e.isFile() && !path.split('/').includes('_delta_log')) out.push(path);
  }
  return out.sort();
}

function rowsOfParquet(path: string): Record<string, unknown>[] {
  const table = tableFromIPC(readParquet(readFileSync(path)).intoIPCStream());
  return table.toArray().map((r: { toJSON(): Record<string, unknown> }) => r.toJSON());
}

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const minute = (i: number): number => T0 + i * 60_000;

describe.each([0, 1, 2])('DatasetWriter (encoderThreads %i)', (encoderThreads) => {
  // The files as written are this file's subject: upkeep (which merges them) has tests of its own.
  const make = (o: Partial<DatasetWriterOptions> = {}): DatasetWriter =>
    new DatasetWriter({ dir, encoderThreads, upkeep: false, ...o });

  it('fails with QF_FILE_WRITE instead of hanging where directories cannot be made (/proc)', async () => {
    const w = new DatasetWriter({ dir: '/proc/quoteflow-cannot-exist', encoderThreads });
    await w.write([bar('AAPL.US', minute(0))]);
    await expect(w.flush()).rejects.toMatchObject({ code: 'QF_FILE_WRITE' });
    await w.close().catch(() => undefined);
  });

  it('commits a file only while its fence allows, and fails loudly with QF_FENCED otherwise', async () => {
    let leaseHeld = true;
    const w = make({ fence: () => leaseHeld });
    await w.write([bar('AAPL.US', minute(0))]);
    expect(await w.flush()).toHaveLength(1);
    leaseHeld = false; // paused past the lease: another worker writes these series now
    await w.write([bar('AAPL.US', minute(1))]);
    await expect(w.flush()).rejects.toMatchObject({ code: 'QF_FENCED' });
    await w.close().catch(() => undefined);
    const files = (await walk(dir)).filter((p) => !p.startsWith('.staging'));
    expect(files).toHaveLength(1);
    expect(rowsOfParquet(join(dir, files[0]!)).map((r) => Number(r.ts))).toEqual([minute(0)]);
    expect((await walk(dir)).filter((p) => p.startsWith('.staging'))).toEqual([]);
  });

  it('writes each dataset under its Hive partition and leaves nothing in staging', async () => {
    await using w = make();
    await w.write([
      bar('AAPL.US', minute(0)),
      bar('700.HK', minute(1), { klineType: 8 }),
      depth('AAPL.US', 7n, minute(0), [level(1, 2)], []),
      suspension('XYZ'),
    ]);
    const files = await w.flush();
    expect(files.map((f) => f.kind).sort()).toEqual(['depth', 'kline', 'kline', 'suspension']);
    const all = await walk(dir);
    expect(all.map((p) => p.replace(/part-\d{8}T\d{9}Z-[0-9a-f]{8}-\d{6}\.parquet$/, 'FILE'))).toEqual([
      'depth/date=2026-01-05/FILE',
      'kline/kline_type=1/month=2026-01/FILE',
      'kline/kline_type=8/month=2026-01/FILE',
      'suspension/exchange=nyse/FILE',
    ]);
    expect(await readdir(join(dir, '.staging'))).toEqual([]);
    for (const f of files) expect((await stat(f.path)).size).toBe(f.bytes);
  });

  it('writes closed bars only: a forming bar-update is ignored, a final one is written', async () => {
    await using w = make();
    w.append(barUpdate('AAPL.US', minute(0), false));
    w.append(barUpdate('AAPL.US', minute(0), true));
    const [file] = await w.flush();
    expect(file?.rows).toBe(1);
    expect(rowsOfParquet(file!.path)).toEqual([
      {
        code: 'AAPL.US',
        ts: minute(0),
        open: 10,
        high: 11,
        low: 9.5,
        close: 10.5,
        volume: 1000,
        turnover: 10500,
        read_at: minute(0) + 30_000,
      },
    ]);
  });

  // Bigger than the pieces (256 Ki rows) a file's rows are handed to the encoder in while it is open.
  it.each(['parquet', 'arrow', 'ndjson'] as const)(
    'writes a %s file of 300,001 rows handed over in pieces: every row, in order, nulls in place',
    async (format) => {
      const n = 300_001;
      await using w = make({ format, klineSubPartition: 'none' });
      const volumeOf = (i: number): number | null => (i % 7 === 3 ? null : i);
      for (let i = 0; i < n; i += 10_000) {
        const rows = [];
        for (let j = i; j < Math.min(n, i + 10_000); j++)
          rows.push(bar(`C${Math.floor(j / 1000)}.US`, minute(j), { open: j / 4, volume: volumeOf(j) }));
        await w.write(rows);
      }
      const [file, ...more] = await w.flush();
      expect(more).toEqual([]);
      expect(file?.rows).toBe(n);
      let bad = 0;
      const check = (
        j: number,
        code: unknown,
        ts: unknown,
        open: unknown,
        volume: unknown,
        readAt: unknown,
      ): void => {
        if (code !== `C${Math.floor(j / 1000)}.US` || ts !== minute(j) || open !== j / 4) bad++;
        else if (volume !== volumeOf(j) || readAt !== minute(j) + 30_000) bad++;
      };
      if (format === 'ndjson') {
        const lines = readFileSync(file!.path, 'utf8').trimEnd().split('\n');
        expect(lines).toHaveLength(n);
        lines.forEach((l, j) => {
          const r = JSON.parse(l) as Record<string, unknown>;
          check(
            j,
            r['code'],
            Date.parse(r['ts'] as string),
            r['open'],
            r['volume'],
            Date.parse(r['read_at'] as string),
          );
        });
      } else {
        const ipc = readFileSync(file!.path);
        if (format === 'parquet') {
          // Streamed into one encoder: one row group (up to 1 Mi rows).
          const meta = (await ParquetFile.fromFile(new Blob([ipc]))).metadata();
          expect(meta.numRowGroups()).toBe(1);
        }
        const t = tableFromIPC(format === 'arrow' ? ipc : readParquet(ipc).intoIPCStream());
        expect(t.numRows).toBe(n);
        const [code, ts, open, volume, readAt] = ['code', 'ts', 'open', 'volume', 'read_at'].map((c) =>
          t.getChild(c)!,
        );
        const [tsv, openv, volumev, readAtv] = [ts, open, volume, readAt].map((c) => c!.toArray());
        for (let j = 0; j < n; j++) {
          const v = volume!.isValid(j) ? volumev![j] : null;
          check(j, code!.get(j), Number(tsv![j]), openv![j], v, Number(readAtv![j]));
        }
      }
      expect(bad).toBe(0);
    },
    60_000,
  );

  it('rolls to a new file every maxRowsPerFile rows', async () => {
    await using w = make({ maxRowsPerFile: 3 });
    await w.write(Array.from({ length: 7 }, (_, i) => bar('AAPL.US', minute(i))));
    const files = await w.flush();
    expect(files.map((f) => f.rows).sort()).toEqual([1, 3, 3]);
    const ts = files
      .flatMap((f) => rowsOfParquet(f.path).map((r) => r['ts'] as number))
      .sort((a, b) => a - b);
    expect(ts).toEqual(Array.from({ length: 7 }, (_, i) => minute(i)));
  });

  it('returns each finished file from exactly one flush, and none when onFile takes them', async () => {
    await using w = make({ maxRowsPerFile: 2 });
    await w.write([bar('A', minute(0)), bar('A', minute(1)), bar('A', minute(2))]);
    expect((await w.flush()).map((f) => f.rows).sort()).toEqual([1, 2]);
    expect(await w.flush()).toEqual([]);
    const onFile = vi.fn();
    await using v = make({ onFile });
    v.append(bar('B', minute(0)));
    expect(await v.flush()).toEqual([]);
    expect(onFile).toHaveBeenCalledTimes(1);
  });

  it('rolls to a new file once the buffered rows reach maxBytesPerFile', async () => {
    await using w = make({ maxBytesPerFile: 200 });
    await w.write(Array.from({ length: 10 }, (_, i) => bar('AAPL.US', minute(i))));
    const files = await w.flush();
    expect(files.length).toBeGreaterThan(2);
    expect(files.reduce((n, f) => n + f.rows, 0)).toBe(10);
  });

  it('gives every file a unique name that sorts by creation, also across writers on one directory', async () => {
    const names: string[] = [];
    for (let k = 0; k < 2; k++) {
      await using w = make({ maxRowsPerFile: 1 });
      await w.write([bar('AAPL.US', minute(0)), bar('AAPL.US', minute(1))]);
      names.push(...(await w.flush()).map((f) => f.relativePath).sort());
    }
    expect(new Set(names).size).toBe(4);
    expect((await walk(join(dir, 'kline'))).length).toBe(4);
  });

  it('is closed after close(): close is idempotent and a later write throws QF_CLOSED', async () => {
    const w = make();
    w.append(bar('AAPL.US', minute(0)));
    await Promise.all([w.close(), w.close()]);
    expect((await walk(join(dir, 'kline'))).length).toBe(1);
    expect(() => w.append(bar('AAPL.US', minute(1)))).toThrow(expect.objectContaining({ code: 'QF_CLOSED' }));
  });

  it('reports a file it cannot write as QF_FILE_WRITE, from flush and from onError', async () => {
    await writeFile(join(dir, 'kline'), 'not a directory');
    const onError = vi.fn();
    const w = make({ onError });
    w.append(bar('AAPL.US', minute(0)));
    const err: unknown = await w.flush().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileSinkError);
    expect(err).toMatchObject({ code: 'QF_FILE_WRITE', retryable: true });
    expect((err as Error).message).toContain('kline/kline_type=1/month=2026-01/part-');
    expect(onError).toHaveBeenCalledTimes(1);
    await expect(w.close()).rejects.toMatchObject({ code: 'QF_FILE_WRITE' });
    expect(await readdir(join(dir, '.staging')).catch(() => [])).toEqual([]);
  });
});

describe('DatasetWriter', () => {
  it('finishes a partition file maxFileAgeMs after its first row, on the clock it is given', async () => {
    const clock = new ManualClock(T0);
    const onFile = vi.fn();
    await using w = new DatasetWriter({ dir, encoderThreads: 0, maxFileAgeMs: 1000, onFile, clock });
    w.append(bar('AAPL.US', minute(0)));
    await clock.advance(750);
    w.append(bar('AAPL.US', minute(1)));
    expect(onFile).not.toHaveBeenCalled();
    await clock.advance(250);
    await vi.waitFor(() => expect(onFile).toHaveBeenCalledTimes(1));
    expect(onFile.mock.calls[0]?.[0]).toMatchObject({ rows: 2, kind: 'kline' });
    expect(onFile.mock.calls[0]?.[0].relativePath).toMatch(/part-20260105T013001000Z-/); // named when finished;
  });

  it('leaves no empty staging directory behind at close, and keeps one another writer stages in', async () => {
    const w = new DatasetWriter({ dir, encoderThreads: 0 });
    await w.write([bar('AAPL.US', minute(0))]);
    expect(await w.flush()).toHaveLength(1);
    await w.close();
    expect(await readdir(dir)).toEqual(['kline']);
    // Another live writer's file in staging: the directory stays, with that file.
    const theirs = `${hostname().replaceAll('~', '_')}~${process.pid}~part-x.parquet.tmp`;
    await mkdir(join(dir, '.staging'));
    await writeFile(join(dir, '.staging', theirs), 'partial');
    const second = new DatasetWriter({ dir, encoderThreads: 0 });
    await second.write([bar('AAPL.US', minute(1))]);
    await second.close();
    expect(await readdir(join(dir, '.staging'))).toEqual([theirs]);
  });

  it('removes stale staging leftovers of dead writers on start and keeps those of live ones', async () => {
    const staging = join(dir, '.staging');
    await mkdir(staging, { recursive: true });
    const host = hostname().replaceAll('~', '_');
    const deadPid = 2 ** 22 + 12345; // above Linux's pid_max default, so never alive
    const dead = `${host}~${deadPid}~part-a.parquet.tmp`;
    const live = `${host}~${process.pid}~part-b.parquet.tmp`;
    const oldOther = `other-host~1~part-c.parquet.tmp`;
    const freshOther = `other-host~1~part-d.parquet.tmp`;
    for (const n of [dead, live, oldOther, freshOther]) await writeFile(join(staging, n), 'partial');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await utimes(join(staging, oldOther), twoHoursAgo, twoHoursAgo);
    // On start: no file needs to be written for the cleanup to happen.
    await new DatasetWriter({ dir, encoderThreads: 0 }).close();
    expect((await readdir(staging)).sort()).toEqual([freshOther, live].sort());
  });

  it('writes a depth file of 25,000 ticks with 80 levels each, handed over in pieces by size', async () => {
    const n = 25_000;
    await using w = new DatasetWriter({ dir, maxRowsPerFile: n + 1, encoderThreads: 1 });
    const bids = (j: number): Level[] =>
      Array.from({ length: 80 }, (_, k) => level(j + k / 100, k % 2 === 0 ? undefined : k));
    for (let j = 0; j < n; j += 1000)
      await w.write(
        Array.from({ length: 1000 }, (_, i) => depth('AAPL.US', BigInt(j + i), minute(0), bids(j + i), [])),
      );
    const [file] = await w.flush();
    const t = tableFromIPC(readParquet(readFileSync(file!.path)).intoIPCStream());
    expect(t.numRows).toBe(n);
    let bad = 0;
    // 34 + 80 * 17 buffered bytes per tick: the first piece (32 MiB) ends after tick 24,071.
    for (const j of [0, 1, 24_069, 24_070, 24_071, 24_072, 24_800, n - 1]) {
      const side = (t.getChild('bids')!.get(j)!.toArray() as { toJSON(): Record<string, unknown> }[]).map(
        (l) => l.toJSON(),
      );
      if (
        JSON.stringify(side) !==
        JSON.stringify(bids(j).map((l) => ({ price: l.price, volume: l.volume ?? null })))
      )
        bad++;
      if (t.getChild('seq')!.get(j) !== BigInt(j)) bad++;
    }
    expect(bad).toBe(0);
  }, 60_000);

  it('writes Arrow IPC files that apache-arrow reads back with the exact types', async () => {
    await using w = new DatasetWriter({ dir, format: 'arrow', encoderThreads: 1 });
    await w.write([
      bar('AAPL.US', minute(0), { volume: null }),
      depth('AAPL.US', 2n ** 62n, undefined, [], [level(1.5, undefined)]),
    ]);
    const files = await w.flush();
    const kline = files.find((f) => f.kind === 'kline')!;
    expect(kline.relativePath).toMatch(/\.arrow$/);
    const t = tableFromIPC(readFileSync(kline.path));
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual([
      'code:Utf8:false',
      'ts:Timestamp<MILLISECOND, UTC>:false',
      'open:Float64:false',
      'high:Float64:false',
      'low:Float64:false',
      'close:Float64:false',
      'volume:Float64:true',
      'turnover:Float64:true',
      'read_at:Timestamp<MILLISECOND, UTC>:false',
    ]);
    expect(t.get(0)?.toJSON()).toMatchObject({
      code: 'AAPL.US',
      ts: minute(0),
      volume: null,
      turnover: 10500,
      read_at: minute(0) + 30_000,
    });
    const d = tableFromIPC(readFileSync(files.find((f) => f.kind === 'depth')!.path));
    expect(String(d.schema.fields.find((f) => f.name === 'seq')?.type)).toBe('Uint64');
    expect(d.get(0)?.toJSON()['seq']).toBe(2n ** 62n);
    expect(d.get(0)?.toJSON()['tick_time']).toBeNull();
  });

  it.each(['parquet', 'arrow', 'ndjson'] as const)(
    'keeps a depth seq of 2^64 - 1 (the service fixture) exact in %s, never -1',
    async (format) => {
      await using w = new DatasetWriter({ dir, format, encoderThreads: 0 });
      const max = 2n ** 64n - 1n;
      await w.write([
        depth('A', max, minute(0), [], []),
        depth('B', 2n ** 63n, minute(0), [], []),
        depth('C', 0n, minute(0), [], []),
      ]);
      const [file] = await w.flush();
      const bytes = readFileSync(file!.path);
      const seqs =
        format === 'ndjson'
          ? bytes
              .toString('utf8')
              .trimEnd()
              .split('\n')
              .map((l) => BigInt((JSON.parse(l) as { seq: string }).seq))
          : [
              ...tableFromIPC(format === 'arrow' ? bytes : readParquet(bytes).intoIPCStream())
                .getChild('seq')!
                .toArray(),
            ];
      expect(seqs).toEqual([max, 2n ** 63n, 0n]);
    },
  );

  it.each([2n ** 64n, -1n])(
    'refuses a depth seq of %s loudly (QF_VALUE_OUT_OF_RANGE) and buffers nothing of it',
    async (seq) => {
      await using w = new DatasetWriter({ dir, encoderThreads: 0 });
      w.append(depth('OK', 1n, minute(0), [level(1, 1)], []));
      let err: unknown;
      try {
        w.append(depth('BAD', seq, minute(0), [level(2, 2)], []));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FileSinkError);
      expect(err).toMatchObject({ code: 'QF_VALUE_OUT_OF_RANGE', retryable: false });
      expect((err as Error).message).toContain(String(seq));
      const [file] = await w.flush();
      expect(file?.rows).toBe(1);
      expect(rowsOfParquet(file!.path)).toMatchObject([{ code: 'OK', seq: 1n }]);
    },
  );

  it('writes whole floats in NDJSON with a fraction (18.0), in bars and book levels alike', async () => {
    await using w = new DatasetWriter({ dir, format: 'ndjson', encoderThreads: 0 });
    await w.write([
      bar('A', minute(0), { open: 18, high: -0, low: 1e21, close: 0.1, volume: 2 ** 53, turnover: 1e-7 }),
      depth('A', 1n, minute(0), [level(5000, 3)], [level(5000.5, undefined)]),
    ]);
    const files = await w.flush();
    const text = (kind: string): string => readFileSync(files.find((f) => f.kind === kind)!.path, 'utf8');
    expect(text('kline')).toContain(
      '"open":18.0,"high":-0.0,"low":1e+21,"close":0.1,"volume":9007199254740992.0,"turnover":1e-7,',
    );
    expect(text('depth')).toContain(
      '"bids":[{"price":5000.0,"volume":3.0}],"asks":[{"price":5000.5,"volume":null}]}',
    );
    const row = JSON.parse(text('kline')) as Record<string, unknown>;
    expect(row).toMatchObject({ open: 18, high: -0, low: 1e21, close: 0.1, volume: 2 ** 53, turnover: 1e-7 });
  });

  it('writes NDJSON with ISO times, seq as a string and null volumes', async () => {
    await using w = new DatasetWriter({ dir, format: 'ndjson', encoderThreads: 0 });
    await w.write([bar('AAPL.US', minute(0), { volume: null, readAtMs: minute(1) + 5 })]);
    const [kline] = await w.flush();
    expect(readFileSync(kline!.path, 'utf8')).toBe(
      '{"code":"AAPL.US","ts":"2026-01-05T01:30:00.000Z","open":10.0,"high":11.0,"low":9.5,"close":10.5,"volume":null,"turnover":10500.0,"read_at":"2026-01-05T01:31:00.005Z"}\n',
    );
    await w.write([depth('AAPL.US', 9007199254740993n, minute(0), [level(1.5, undefined)], [])]);
    const [file] = await w.flush();
    expect(file?.relativePath).toMatch(/^depth\/date=2026-01-05\/part-.*\.ndjson$/);
    expect(readFileSync(file!.path, 'utf8')).toBe(
      '{"code":"AAPL.US","seq":"9007199254740993","tick_time":"2026-01-05T01:30:00.000Z","bids":[{"price":1.5,"volume":null}],"asks":[]}\n',
    );
  });

  it.each([
    [{ maxRowsPerFile: 0 }, 'maxRowsPerFile'],
    [{ maxBytesPerFile: 1.5 }, 'maxBytesPerFile'],
    [{ encoderThreads: -1 }, 'encoderThreads'],
    [{ format: 'csv' }, 'format'],
    [{ klineSubPartition: 'week' }, 'klineSubPartition'],
    [{ dir: '' }, 'dir'],
  ])('rejects %o naming the option', (bad, name) => {
    expect(() => new DatasetWriter({ dir, ...(bad as object) })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', message: expect.stringContaining(`"${name}"`) }),
    );
  });
});
