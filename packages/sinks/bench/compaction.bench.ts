// Reading a day of checkpoints, before and after `compactDataset`, against the same rows in one
// file, in the same run: DuckDB, pyarrow and Polars (from `.venv`) each run a group-by over
// `DIR/kline` (best of 5). A sync checkpoints every 30 s, so a day of 1-minute bars of N series is
// 1,440 files of N rows here (one per minute). BENCH_COMPACT_SERIES (default 1000) sets N.
// Run: `pnpm bench compaction` (needs `scripts/python/setup.sh`; builds first).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactDataset, DatasetWriter } from '@quoteflow/sinks';
import { benchBar as bar } from './bench-bars.js';

const series = Number(process.env['BENCH_COMPACT_SERIES'] ?? 1000);
const MINUTES = 1_440;
const root = new URL('../../..', import.meta.url).pathname;
const python = join(root, '.venv', 'bin', 'python');

const work = await mkdtemp(join(tmpdir(), 'qf-compact-bench-'));
try {
  const small = join(work, 'checkpoints');
  const single = join(work, 'single');
  const compacted = join(work, 'compacted');
  // One file per minute: what a day of checkpoints leaves without upkeep.
  const w = new DatasetWriter({ dir: small, encoderThreads: 0, upkeep: false });
  for (let m = 0; m < MINUTES; m++) {
    for (let s = 0; s < series; s++) w.append(bar(s, m));
    await w.flush();
  }
  await w.close();
  const one = new DatasetWriter({ dir: single, maxRowsPerFile: 10_000_000, maxBytesPerFile: 2 ** 31 - 1 });
  for (let m = 0; m < MINUTES; m++) for (let s = 0; s < series; s++) one.append(bar(s, m));
  await one.close();
  execFileSync('cp', ['-r', small, compacted]);
  const t0 = performance.now();
  const result = await compactDataset({ dir: compacted, dataset: 'kline' });
  const compactMs = performance.now() - t0;
  const out = JSON.parse(
    execFileSync(python, [join(root, 'scripts/python/bench_read_dataset.py'), small, compacted, single], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  ) as Record<string, { files: number; duckdb: number; pyarrow: number; polars: number }>;
  const rows = series * MINUTES;
  console.log(
    `${rows.toLocaleString('en')} rows (${series} series × ${MINUTES} one-minute bars); compaction: ` +
      `${result.map((r) => `${r.filesBefore} → ${r.filesAfter} files`).join(', ')} in ${(compactMs / 1000).toFixed(1)} s\n`,
  );
  console.log('| dataset | files | DuckDB (s) | pyarrow (s) | Polars (s) |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const base = out[single]!;
  for (const [name, dir] of [
    ['a day of checkpoints', small],
    ['compacted', compacted],
    ['one file (baseline)', single],
  ] as const) {
    const r = out[dir]!;
    const cell = (k: 'duckdb' | 'pyarrow' | 'polars') =>
      `${r[k].toFixed(3)} (${(r[k] / base[k]).toFixed(2)}x)`;
    console.log(`| ${name} | ${r.files} | ${cell('duckdb')} | ${cell('pyarrow')} | ${cell('polars')} |`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
