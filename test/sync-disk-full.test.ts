/**
 * A full disk is a failure, not a success: `quoteflow sync` into a dataset on a small tmpfs that
 * already holds committed rows fails (exit 1, naming the directory and ENOSPC), reports nothing as
 * flushed, keeps what was committed readable, and a restart after space was freed completes the
 * history. Needs root (mount); the test command runs as root here and in CI.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readKlineBars } from '@quoteflow/pipelines';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'sync-disk-full-token-e21c';
const CODES = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'];
let sim: Simulator;
let mnt: string;

const sh = (cmd: string, ...args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });
/** Bytes used on the file system at `dir`. */
const usedBytes = (dir: string): number => Number(sh('df', '--output=used', '-B1', dir).split('\n')[1]);

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('sync-disk-full mounts a tmpfs: run the tests as root');
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 3 });
  mnt = await mkdtemp(join(tmpdir(), 'qf-disk-full-'));
  sh('mount', '-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mnt);
});
afterAll(async () => {
  await sim?.close();
  if (mnt !== undefined) {
    sh('umount', mnt);
    await rm(mnt, { recursive: true, force: true });
  }
});

const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_LOG_LEVEL: 'info',
});
const sync = (bars: number, extra: string[] = []) =>
  runQuoteflow(
    [
      'sync',
      '--codes',
      CODES.join(','),
      '--kline-types',
      '1',
      '--bars',
      String(bars),
      '--out',
      join(mnt, 'D'),
      ...extra,
    ],
    env(),
  );

it('fails loudly when the disk fills, keeps what was committed, and completes the history once there is room', async () => {
  const first = await sync(100, ['--duration', '2']);
  expect(first.code, first.stderr).toBe(0);
  const committed = await readKlineBars(join(mnt, 'D'));
  expect(committed.length).toBeGreaterThanOrEqual(400);

  // A little room left: less than the 8,000 bars of history asked for next.
  const room = 64 * 1024;
  sh('mount', '-o', `remount,size=${usedBytes(mnt) + room}`, mnt);
  const full = await sync(2_000, ['--duration', '60', '--checkpoint-ms', '1000']);
  expect(full.code, full.stderr).toBe(1);
  expect(full.stderr).toMatch(/ENOSPC/);
  expect(full.stderr).toContain(join(mnt, 'D'));
  expect(full.stderr).not.toContain('sinks flushed');
  expect(full.elapsedMs).toBeLessThan(60_000);
  // What was committed is intact and readable.
  expect((await readKlineBars(join(mnt, 'D'))).length).toBeGreaterThanOrEqual(committed.length);

  sh('mount', '-o', 'remount,size=50m', mnt);
  const again = await sync(2_000, ['--duration', '3']);
  expect(again.code, again.stderr).toBe(0);
  const bars = await readKlineBars(join(mnt, 'D'));
  for (const code of CODES) {
    const starts = bars
      .filter((b) => b.code === code)
      .map((b) => b.tsMs)
      .sort((a, b) => a - b);
    expect(new Set(starts).size, `${code}: a bar twice`).toBe(starts.length);
    expect(starts.length, code).toBeGreaterThanOrEqual(2_000);
    for (let i = 1; i < starts.length; i++)
      expect(starts[i]! - starts[i - 1]!, `${code}: a gap`).toBe(60_000);
  }
  expect(sim.log.refused()).toEqual([]);
}, 150_000);
