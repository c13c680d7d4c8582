import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactDataset } from './compact-dataset.js';
import { DatasetLog, listDataFiles } from './dataset-log.js';
import { DatasetWriter } from './dataset-writer.js';
import type { DatasetFormat } from './dataset-writer-options.js';
import { bar, depth, level } from '../../test-support/test-records.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-compact-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 14, 30);

/** Writes `files` small files of 1-minute bars into one month partition, `perFile` bars each. */
async function writeSmallFiles(
  files: number,
  perFile: number,
  format: DatasetFormat = 'parquet',
): Promise<void> {
  // Small files left as written, for the manual compaction to merge (no upkeep in the background).
  const writer = new DatasetWriter({ dir, format, encoderThreads: 0, upkeep: false });
  for (let f = 0; f < files; f++) {
    for (let i = 0; i < perFile; i++) {
      const n = f * perFile + i;
      await writer.write(
        bar(`C${n % 7}.US`, T0 + Math.floor(n / 7) * 60_000, {
          open: n,
          close: n + 0.25,
          volume: n % 5 === 0 ? null : n,
        }),
      );
    }
    await writer.flush();
  }
  await writer.close();
}

/** Every row of the dataset as `code|ts|open|close|volume`, sorted. */
async function rowsOf(dataset = 'kline'): Promise<string[]> {
  const out: string[] = [];
  for (const rel of await listDataFiles(dir, dataset as 'kline')) {
    const bytes = await readFile(join(dir, rel));
    if (rel.endsWith('.ndjson')) {
      for (const line of bytes
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')) {
        const r = JSON.parse(line) as Record<string, unknown>;
        out.push([r.code, r.ts, r.open, r.close, r.volume].join('|'));
      }
      continue;
    }
    const table = rel.endsWith('.parquet')
      ? tableFromIPC(readParquet(bytes).intoIPCStream())
      : tableFromIPC(bytes);
    for (const r of table.toArray() as Record<string, unknown>[]) {
      out.push([r.code, Number(r.ts), r.open, r.close, r.volume].join('|'));
    }
  }
  return out.sort();
}

describe('compactDataset', () => {
  it.each(['parquet', 'arrow', 'ndjson'] as const)(
    'merges a partition of %s files into one with the same rows',
    async (format) => {
      await writeSmallFiles(12, 50, format);
      const before = await rowsOf();
      expect(before).toHaveLength(600);
      expect(await listDataFiles(dir, 'kline')).toHaveLength(12);
      const results = await compactDataset({ dir, dataset: 'kline' });
      expect(results).toEqual([
        expect.objectContaining({
          partition: 'kline/kline_type=1/month=2026-01',
          format,
          filesBefore: 12,
          filesAfter: 1,
          rows: 600,
        }),
      ]);
      expect(await listDataFiles(dir, 'kline')).toHaveLength(1);
      expect(await rowsOf()).toEqual(before);
      // Nothing left behind, not even an empty staging directory, and a second run finds nothing to do.
      expect(await readdir(dir)).not.toContain('.staging');
      expect(await compactDataset({ dir, dataset: 'kline' })).toEqual([]);
    },
  );

  it('swaps by two renames where renameat2 is not available, with the same result', async () => {
    process.env.QUOTEFLOW_NO_EXCHANGE = '1';
    try {
      await writeSmallFiles(3, 20);
      const before = await rowsOf();
      await compactDataset({ dir, dataset: 'kline' });
      expect(await listDataFiles(dir, 'kline')).toHaveLength(1);
      expect(await rowsOf()).toEqual(before);
    } finally {
      delete process.env.QUOTEFLOW_NO_EXCHANGE;
    }
  });

  it('cuts files at maxRowsPerFile: ceil(rows / max) files, each at most max rows', async () => {
    await writeSmallFiles(10, 33);
    const results = await compactDataset({ dir, dataset: 'kline', maxRowsPerFile: 100 });
    expect(results[0]).toMatchObject({ filesBefore: 10, filesAfter: 4, rows: 330 });
    const log = await DatasetLog.open(dir, 'kline');
    expect([...log.files.values()].map((f) => f.rows).sort()).toEqual([100, 100, 100, 30]);
    expect(await rowsOf()).toHaveLength(330);
  });

  it('keeps a file that lands in the partition while it is being compacted (a writer that does not commit)', async () => {
    await writeSmallFiles(4, 10);
    const partition = join(dir, 'kline/kline_type=1/month=2026-01');
    let injected = false;
    await compactDataset({
      dir,
      dataset: 'kline',
      // Asked after the log was read, before the build: a file written now is not among the inputs.
      partitions: (p) => {
        if (!injected) {
          injected = true;
          writeFileSync(
            join(partition, 'part-late.ndjson'),
            `${JSON.stringify({ code: 'LATE.US', ts: T0, open: 1, close: 1, volume: 1 })}\n`,
          );
        }
        return p.startsWith('kline/');
      },
    });
    const names = await readdir(partition);
    expect(names).toContain('part-late.ndjson');
    expect(names.filter((n) => n.endsWith('.parquet'))).toHaveLength(1);
    expect(await rowsOf()).toHaveLength(41);
  });

  it('compacts depth ticks with seq above 2^63 and empty book sides exactly', async () => {
    const writer = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
    for (let i = 0; i < 5; i++) {
      await writer.write(depth('D.US', 18446744073709551615n - BigInt(i), T0 + i, [level(1.5, 2)], []));
      await writer.flush();
    }
    await writer.close();
    await compactDataset({ dir, dataset: 'depth' });
    const files = await listDataFiles(dir, 'depth');
    expect(files).toHaveLength(1);
    const table = tableFromIPC(readParquet(await readFile(join(dir, files[0]!))).intoIPCStream());
    expect(String(table.schema.fields.find((f) => f.name === 'seq')?.type)).toBe('Uint64');
    expect((table.getChild('seq')?.toArray() as BigUint64Array)[0]).toBe(18446744073709551615n);
    expect(table.numRows).toBe(5);
  });
});
