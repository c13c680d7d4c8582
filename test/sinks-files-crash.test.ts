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

// Runs in a child process: writes 1-minute bars forever, one file per ROWS_PER_FILE rows, kept as
// written (no upkeep: the test checks each file it printed).
const CHILD = `
import { DatasetWriter } from ${JSON.stringify(join(REPO_ROOT, 'packages/sinks/src/files/dataset-writer.ts'))};
const w = new DatasetWriter({ dir: process.argv[2], maxRowsPerFile: ${ROWS_PER_FILE}, upkeep: false, onFile: (f) => console.log('file', f.relativePath) });
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

  // Kill while a file is being written: when a staging file appears after a few finished files,
  // stop the child (SIGSTOP: it can neither write nor rename while stopped) and look: if the file
  // is still in staging, the child was between creating it and renaming it into place, and the
  // SIGKILL lands there; if it was renamed already, let the child go on and wait for the next one.
  const killedWriting = await new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('no kill landed while a file was being written within 60 s'));
    }, 60_000);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited early (${code}): ${stderr}`));
    });
    const poll = setInterval(() => {
      if (!existsSync(join(dir, '.staging'))) return;
      clearInterval(poll);
      let done = false;
      const watcher = watch(join(dir, '.staging'), (_event, name) => {
        if (done || finished < 2 || name?.endsWith('.tmp') !== true) return;
        child.kill('SIGSTOP');
        if (existsSync(join(dir, '.staging', name))) {
          done = true;
          child.kill('SIGKILL');
          watcher.close();
          clearTimeout(deadline);
          resolve(name);
        } else child.kill('SIGCONT');
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
  // No partial file beside the data. In the table's log, a kill can leave the hidden temporary of
  // the durable write it interrupted (`_delta_log/.NNN.json.RANDOM.tmp`, or of the writer's own
  // `.quoteflow-applied` note): no Delta reader reads it (its name is not a version's), and the
  // file it was to become was never written.
  const temps = (await readdir(join(dir, 'kline'), { recursive: true })).filter((p) => p.includes('.tmp'));
  expect(temps.filter((p) => !/^_delta_log\/\.[^/]+\.[0-9a-f]{8}\.tmp$/.test(p))).toEqual([]);
  for (const f of visible) {
    const got = await readDataset('pyarrow', join(dir, 'kline', f));
    expect(got.rows.length).toBe(ROWS_PER_FILE);
  }
  // The file the child was writing when it died stayed in staging, never in the dataset.
  const leftovers = await readdir(join(dir, '.staging'));
  expect(leftovers).toContain(killedWriting);

  await using next = new DatasetWriter({ dir, encoderThreads: 0, upkeep: false });
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
    `crash test: killed while writing ${killedWriting}, ${visible.length} complete files, ${leftovers.length} staging leftovers cleaned`,
  );
});
