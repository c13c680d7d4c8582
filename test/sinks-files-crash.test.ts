/**
 * A writer killed with SIGKILL in the middle of writing leaves only complete files in the
 * dataset (every one readable by pyarrow), and the next writer removes its staging leftovers.
 */
import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DatasetWriter } from '../packages/sinks/src/index.js';
import { ensurePython, readDataset, REPO_ROOT } from './support/python.js';

const ROWS_PER_FILE = 5_000;
let root: string;

beforeAll(async () => {
  ensurePython();
  root = await mkdtemp(join(tmpdir(), 'qf-crash-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

// Runs in a child process: writes 1-minute bars forever, one file per ROWS_PER_FILE rows.
const CHILD = `
import { DatasetWriter } from ${JSON.stringify(join(REPO_ROOT, 'packages/sinks/src/files/dataset-writer.ts'))};
const w = new DatasetWriter({ dir: process.argv[2], maxRowsPerFile: ${ROWS_PER_FILE}, onFile: (f) => console.log('file', f.relativePath) });
const t0 = Date.UTC(2026, 0, 5);
for (let i = 0; ; i += 1000) {
  const batch = [];
  for (let j = i; j < i + 1000; j++) {
    batch.push({ type: 'bar', code: 'C' + (j % 50) + '.US', klineType: 1, tsMs: t0 + Math.floor(j / 50) * 60000,
      open: j, high: j + 1, low: j - 1, close: j + 0.5, volume: j % 7 === 0 ? null : j, turnover: j * 10,
      readAtMs: t0 + 86_400_000, receivedAtMs: t0 + 86_400_000 + j });
  }
  await w.write(batch);
}
`;

it('leaves only complete files after SIGKILL mid-write, and the next writer cleans staging', async () => {
  const dir = join(root, 'out');
  const script = join(root, 'child.mts');
  await writeFile(script, CHILD);
  const child = spawn(process.execPath, ['--import', 'tsx', script, dir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let finished = 0;
  child.stdout.on(
    'data',
    (d: Buffer) =>
      (finished += d
        .toString()
        .split('\n')
        .filter((l) => l.startsWith('file ')).length),
  );

  // Kill the moment a staging file appears after a few finished files: the child is then
  // between creating its .tmp file and renaming it.
  const killedMidWrite = await new Promise<boolean>((resolve, reject) => {
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(false);
    }, 60_000);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited early (${code}): ${stderr}`));
    });
    const poll = setInterval(() => {
      if (!existsSync(join(dir, '.staging'))) return;
      clearInterval(poll);
      const watcher = watch(join(dir, '.staging'), (_event, name) => {
        if (finished >= 2 && name?.endsWith('.tmp') === true && existsSync(join(dir, '.staging', name))) {
          child.kill('SIGKILL');
          watcher.close();
          clearTimeout(deadline);
          resolve(true);
        }
      });
    }, 5);
  });
  await new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r(null) : child.on('exit', r),
  );

  const visible = (await readdir(join(dir, 'kline'), { recursive: true })).filter((p) =>
    p.endsWith('.parquet'),
  );
  expect(visible.length).toBeGreaterThanOrEqual(2);
  expect((await readdir(join(dir, 'kline'), { recursive: true })).filter((p) => p.includes('.tmp'))).toEqual(
    [],
  );
  for (const f of visible) {
    const got = await readDataset('pyarrow', join(dir, 'kline', f));
    expect(got.rows.length).toBe(ROWS_PER_FILE);
  }
  // Usually the .tmp the child was writing; none if the kill landed just after its rename.
  const leftovers = await readdir(join(dir, '.staging'));

  await using next = new DatasetWriter({ dir, encoderThreads: 0 });
  await next.write({
    type: 'bar',
    code: 'X',
    klineType: 1,
    tsMs: 0,
    open: 1,
    high: 1,
    low: 1,
    close: 1,
    volume: 1,
    turnover: 1,
    readAtMs: 60_000,
    receivedAtMs: 60_001,
  });
  await next.flush();
  expect(await readdir(join(dir, '.staging'))).toEqual([]);
  console.log(
    `crash test: killed mid-write=${killedMidWrite}, ${visible.length} complete files, ${leftovers.length} staging leftovers cleaned`,
  );
});
