// What a file-listing reader (DuckDB's, pyarrow's and Polars' way of reading the contract's Hive
// layout) sees while partitions are compacted beside a committing writer: every committed row
// exactly once, never a row twice, never a partition half there. Stress test: the loops run as
// fast as they can; what is asserted holds for every read, however the moments fall.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compactDataset } from './compact-dataset.js';
import { DatasetLog, listDataFiles } from './dataset-log.js';
import { DatasetWriter } from './dataset-writer.js';
import type * as ExchangePaths from './internal/exchange-paths.js';
import { bar } from '../../test-support/test-records.js';

/** How each partition swap was done, as `exchangePaths` reports it. */
const swaps = vi.hoisted(() => ({ modes: [] as string[] }));
vi.mock('./internal/exchange-paths.js', async (importOriginal) => {
  const real = await importOriginal<typeof ExchangePaths>();
  return {
    ...real,
    exchangePaths: async (...args: Parameters<typeof real.exchangePaths>) => {
      const result = await real.exchangePaths(...args);
      swaps.modes.push(result.mode);
      return result;
    },
  };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-compact-readers-'));
  swaps.modes.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5, 14, 30);
const COMMITS = 60;
const ROWS_PER_COMMIT = 25;

/**
 * Whether the `renameat2(RENAME_EXCHANGE)` helper can be built here (Linux and a C compiler, as
 * `exchangePaths` builds it on first use). Where it cannot, swaps are two renames.
 */
function exchangeHelperBuildable(): boolean {
  if (process.platform !== 'linux' || process.env.QUOTEFLOW_NO_EXCHANGE === '1') return false;
  return spawnSync(process.env.CC ?? 'cc', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * One read as a file-listing reader does it: list the partition's files, then open each. The row
 * ids (bar n starts at T0 + n minutes), or `'vanished'` when a listed file was gone by the time it
 * was opened (the compaction removed it after the swap: such a query fails and is run again).
 */
async function readAsListingReader(): Promise<number[] | 'vanished'> {
  const ids: number[] = [];
  for (const rel of await listDataFiles(dir, 'kline')) {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(dir, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'vanished';
      throw err;
    }
    const table = tableFromIPC(readParquet(bytes).intoIPCStream());
    for (const ts of table.getChild('ts')!) ids.push((Number(ts) - T0) / 60_000);
  }
  return ids;
}

describe('compactDataset beside readers', () => {
  it('a reader listing a partition while it is compacted again and again, beside a committing writer, sees every committed row exactly once', async () => {
    const atomic = exchangeHelperBuildable();
    const writer = new DatasetWriter({ dir, format: 'parquet', encoderThreads: 0, publish: 'on-commit' });
    const log = await DatasetLog.open(dir, 'kline');
    /** Rows 0 … committed - 1 are committed and published; rows below `written` may be. */
    let committed = 0;
    let written = 0;
    let writing = true;

    const writeLoop = async (): Promise<void> => {
      try {
        for (let c = 0; c < COMMITS; c++) {
          for (let i = 0; i < ROWS_PER_COMMIT; i++) {
            const n = written++;
            await writer.write(bar('C.US', T0 + n * 60_000, { open: n }));
          }
          const files = await writer.flush();
          await log.transaction((tx) =>
            tx.commit({
              operation: 'checkpoint',
              // 'on-commit': each file waits staged until this commit publishes it.
              add: files.map((f) => ({
                path: f.relativePath,
                rows: f.rows,
                bytes: f.bytes,
                staged: f.stagedPath!,
              })),
            }),
          );
          committed = written;
        }
      } finally {
        writing = false;
        await writer.close();
      }
    };

    let compactions = 0;
    const compactLoop = async (): Promise<void> => {
      while (writing) compactions += (await compactDataset({ dir, dataset: 'kline' })).length;
    };

    const reads = { complete: 0, vanished: 0 };
    const readLoop = async (): Promise<void> => {
      while (writing) {
        // Rows committed before the listing starts must all be seen; later ones may be.
        const mustSee = committed;
        const ids = await readAsListingReader();
        const mayHave = written;
        if (ids === 'vanished') {
          reads.vanished++;
          continue;
        }
        reads.complete++;
        const seen = new Set(ids);
        expect(seen.size, 'no row twice').toBe(ids.length);
        for (const id of ids) expect(id).toBeLessThan(mayHave);
        if (atomic) for (let id = 0; id < mustSee; id++) expect(seen.has(id), `row ${id}`).toBe(true);
      }
    };

    await Promise.all([writeLoop(), compactLoop(), readLoop(), readLoop()]);

    // Every commit's rows, once, in as few files as compaction leaves.
    const final = await readAsListingReader();
    expect(final === 'vanished' ? final : [...final].sort((a, b) => a - b)).toEqual(
      Array.from({ length: COMMITS * ROWS_PER_COMMIT }, (_, i) => i),
    );
    // The loops overlapped: many swaps happened while the readers were reading.
    expect(compactions).toBeGreaterThanOrEqual(5);
    expect(reads.complete).toBeGreaterThanOrEqual(10);
    // Each swap was the atomic exchange wherever the helper can be built; two renames otherwise.
    expect(swaps.modes).toHaveLength(compactions);
    expect(new Set(swaps.modes)).toEqual(new Set([atomic ? 'atomic' : 'two-renames']));
    console.info(
      `compactions ${compactions}, reads complete ${reads.complete}, vanished ${reads.vanished}, swap ${swaps.modes[0]}`,
    );
  }, 120_000);
});
