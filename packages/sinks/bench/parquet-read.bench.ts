// What the Parquet layout costs readers: a day of 1-minute bars of 1,000 series (1.44M rows, the
// upkeep bench's rows) written as one file by `DatasetWriter` (the default layout), and the same
// rows encoded with the 256 KiB dictionary page used before (its price columns fall back to plain
// encoding), each read by a group-by over `DIR/kline` with DuckDB, pyarrow and Polars (best of 5,
// scripts/python/bench_read_dataset.py), in one run.
// Run: `pnpm bench parquet-read` (needs `scripts/python/setup.sh`; builds first).
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatasetWriter } from '@quoteflow/sinks';
import { DEFAULT_PARQUET_LAYOUT, encodeArrowTable } from '../dist/files/internal/encode-worker.js';
import { readTable } from '../dist/files/internal/table-rows.js';
import { benchBar } from './bench-bars.js';

const SERIES = 1000;
const MINUTES = 1440;
const root = new URL('../../..', import.meta.url).pathname;

const work = await mkdtemp(join(tmpdir(), 'qf-parquet-read-bench-'));
try {
  const current = join(work, 'default');
  const one = new DatasetWriter({ dir: current, maxRowsPerFile: 10_000_000, maxBytesPerFile: 2 ** 31 - 1 });
  for (let m = 0; m < MINUTES; m++) for (let s = 0; s < SERIES; s++) one.append(benchBar(s, m));
  await one.close();
  const file = (await readdir(current, { recursive: true })).find((f) => f.endsWith('.parquet'))!;
  const before = join(work, 'dictionary-256k');
  const table = readTable(await readFile(join(current, file)), true);
  await mkdir(dirname(join(before, file)), { recursive: true });
  await writeFile(
    join(before, file),
    encodeArrowTable(table, 'parquet', { ...DEFAULT_PARQUET_LAYOUT, dictionaryPageBytes: 256 * 1024 }),
  );
  const out = JSON.parse(
    execFileSync(
      join(root, '.venv', 'bin', 'python'),
      [join(root, 'scripts/python/bench_read_dataset.py'), current, before],
      {
        encoding: 'utf8',
      },
    ),
  ) as Record<string, { duckdb: number; pyarrow: number; polars: number }>;
  console.log(
    `${(SERIES * MINUTES).toLocaleString('en')} rows in one file, read with a group-by (best of 5)\n`,
  );
  console.log('| layout | MB | DuckDB (s) | pyarrow (s) | Polars (s) |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const base = out[before]!;
  for (const [label, dir] of [
    [`dictionary page ${DEFAULT_PARQUET_LAYOUT.dictionaryPageBytes / 1024} KiB (default)`, current],
    ['dictionary page 256 KiB (before)', before],
  ] as const) {
    const r = out[dir]!;
    const mb = (await stat(join(dir, file))).size / 1e6;
    const cell = (k: 'duckdb' | 'pyarrow' | 'polars') =>
      `${r[k].toFixed(3)} (${(r[k] / base[k]).toFixed(2)}x)`;
    console.log(
      `| ${label} | ${mb.toFixed(1)} | ${cell('duckdb')} | ${cell('pyarrow')} | ${cell('polars')} |`,
    );
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
