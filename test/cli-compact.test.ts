/**
 * `quoteflow compact` as a user runs it: merges small files with the same rows (DuckDB reads them
 * back), reports what it did as a table or JSON, and refuses with exit 2, changing nothing, on bad
 * flags or while another live process keeps the dataset's publish lock.
 */
import { hostname } from 'node:os';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Bar } from '../packages/core/src/index.js';
import { DatasetWriter } from '../packages/sinks/src/index.js';
import { DATASET_LOG_DIR, listDataFiles } from '../packages/sinks/src/internal.js';
import { ensurePython, readDataset } from './support/python.js';
import { runQuoteflow } from './support/quoteflow-process.js';

let work: string;
beforeAll(async () => {
  ensurePython();
  work = await mkdtemp(join(tmpdir(), 'qf-cli-compact-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function smallFiles(dir: string, files: number): Promise<void> {
  // Small files left as written for `compact` to merge (no upkeep merging them in the background).
  const writer = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
  for (let f = 0; f < files; f++) {
    for (let i = 0; i < 30; i++) {
      const n = f * 30 + i;
      const tsMs = Date.UTC(2026, 2, 2, 14, 30) + Math.floor(n / 3) * 60_000;
      writer.append({
        type: 'bar',
        code: `S${n % 3}.US`,
        klineType: 1,
        tsMs,
        open: n,
        high: n + 1,
        low: n - 1,
        close: n + 0.5,
        volume: n,
        turnover: n * 2,
        readAtMs: tsMs + 120_000,
      } as Bar);
    }
    await writer.flush();
  }
  await writer.close();
}

it('merges each partition into one file with the same rows, as JSON, and a second run finds nothing', async () => {
  const out = join(work, 'data');
  await smallFiles(out, 6);
  const r = await runQuoteflow(['compact', '--out', out, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({
    partitions: [
      expect.objectContaining({
        dataset: 'kline',
        partition: 'kline/kline_type=1/month=2026-03',
        files_before: 6,
        files_after: 1,
        rows: 180,
      }),
    ],
  });
  expect(await listDataFiles(out, 'kline')).toHaveLength(1);
  const read = await readDataset('duckdb', join(out, 'kline'), { hive: true });
  expect(new Set(read.rows.map((row) => `${String(row.code)}|${String(row.ts)}`)).size).toBe(180);
  const again = await runQuoteflow(['compact', '--out', out]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toMatch(/nothing to compact/);
});

it('refuses with exit 2 and changes nothing while a live process keeps the publish lock, or on bad flags', async () => {
  const out = join(work, 'locked');
  await smallFiles(out, 3);
  const lockDir = join(out, 'kline', DATASET_LOG_DIR);
  await mkdir(lockDir, { recursive: true });
  // This test's own process holds it, for an hour.
  await writeFile(
    join(lockDir, '.quoteflow.lock'),
    JSON.stringify({
      owner: 'test',
      host: hostname(),
      pid: process.pid,
      expiresAtMs: Date.now() + 3_600_000,
    }),
  );
  const r = await runQuoteflow(['compact', '--out', out, '--dataset', 'kline', '--wait', '1']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(new RegExp(`publish lock .* held by process ${process.pid}.*nothing was changed`));
  expect(await listDataFiles(out, 'kline')).toHaveLength(3);
  for (const [args, message] of [
    [['--max-rows-per-file', '0'], /--max-rows-per-file must be a whole number >= 1/],
    [['--wait', 'soon'], /--wait must be a number of seconds/],
    [['--dataset', 'trades'], /--dataset.*trades/],
  ] as const) {
    const bad = await runQuoteflow(['compact', '--out', out, ...args]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(message);
  }
  const missing = await runQuoteflow(['compact', '--out', join(work, 'nope')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/--out .*nope: no such directory/);
});
