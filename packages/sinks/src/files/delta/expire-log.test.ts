import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LocalStore } from '../storage/local-store.js';
import { expireDeltaLog } from './expire-log.js';

let root: string;
const log = (): string => join(root, 'kline', '_delta_log');
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'qf-expire-'));
  await mkdir(log(), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const NOW = Date.UTC(2026, 0, 20, 12);
const HOUR = 3_600_000;
const v20 = (v: number): string => String(v).padStart(20, '0');

/** A log file written `ageMs` before NOW. */
async function file(name: string, ageMs: number, body = '{}\n'): Promise<void> {
  await writeFile(join(log(), name), body);
  const at = new Date(NOW - ageMs);
  await utimes(join(log(), name), at, at);
}

/** Versions 0..25, an hour apart from the oldest (25 h ago) to the newest; checkpoints where asked. */
async function logOf(checkpoints: readonly number[], applied = 25): Promise<void> {
  for (let v = 0; v <= 25; v++) await file(`${v20(v)}.json`, (25 - v) * HOUR);
  for (const v of checkpoints) await file(`${v20(v)}.checkpoint.parquet`, (25 - v) * HOUR);
  await file(`${v20(0)}.${v20(20)}.compacted.json`, 5 * HOUR);
  await file('_last_checkpoint', 0);
  await file('.quoteflow-applied', 0, `${applied}\n`);
}

const left = async (): Promise<string[]> => (await readdir(log())).sort();

it('deletes what precedes the newest checkpoint older than the retention, and nothing newer', async () => {
  await logOf([5, 10, 20]);
  // 12 h: the checkpoint of version 10 (15 h old) is the newest one past it; 20 (5 h old) is not.
  const gone = await expireDeltaLog(new LocalStore(root), 'kline', 12 * HOUR, NOW);
  expect(gone.map((k) => k.slice('kline/_delta_log/'.length)).sort()).toEqual(
    [...Array.from({ length: 10 }, (_, v) => `${v20(v)}.json`), `${v20(5)}.checkpoint.parquet`].sort(),
  );
  expect(await left()).toContain(`${v20(10)}.checkpoint.parquet`);
  expect(await left()).toContain(`${v20(10)}.json`);
  expect(await left()).toContain(`${v20(0)}.${v20(20)}.compacted.json`);
  expect(await left()).toContain('_last_checkpoint');
});

it('deletes nothing while no checkpoint is older than the retention, or a version is not yet published', async () => {
  await logOf([20]);
  expect(await expireDeltaLog(new LocalStore(root), 'kline', 12 * HOUR, NOW)).toEqual([]);
  await rm(root, { recursive: true });
  await mkdir(log(), { recursive: true });
  // Version 4 onwards committed by a writer killed before publishing them: they stay for the next.
  await logOf([5, 10], 3);
  const gone = await expireDeltaLog(new LocalStore(root), 'kline', 12 * HOUR, NOW);
  expect(gone.map((k) => k.slice('kline/_delta_log/'.length)).sort()).toEqual(
    Array.from({ length: 4 }, (_, v) => `${v20(v)}.json`),
  );
});

it('thins checkpoints off the grid once the next one has stood long enough, keeping the newest', async () => {
  await logOf([10, 11, 12, 13, 20, 23, 24, 25]);
  const gone = await expireDeltaLog(new LocalStore(root), 'kline', 100 * HOUR, NOW, {
    keepEvery: 10,
    supersededForMs: 90 * 60_000,
  });
  // 23 and 24 were superseded an hour ago and just now (under 90 minutes): they stay, as 25 (the
  // newest) and the grid's 10 and 20; 11 to 13 were superseded 5 hours ago or more.
  expect(gone.map((k) => k.slice('kline/_delta_log/'.length)).sort()).toEqual([
    `${v20(11)}.checkpoint.parquet`,
    `${v20(12)}.checkpoint.parquet`,
    `${v20(13)}.checkpoint.parquet`,
  ]);
});
