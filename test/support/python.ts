/**
 * The Python readers (pyarrow, Polars, DuckDB) for interop tests: `ensurePython()` runs
 * `scripts/python/setup.sh` once (idempotent, fast when `.venv` is current) and
 * `readDataset()` spawns `test/python/read_dataset.py`, which prints JSON.
 */
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const VENV_PYTHON = join(REPO_ROOT, '.venv', 'bin', 'python');
const READER = join(REPO_ROOT, 'test', 'python', 'read_dataset.py');

let ready = false;

/** Creates or refreshes `.venv` (pyarrow, polars, duckdb); throws with pip's output if it fails. */
export function ensurePython(): string {
  if (ready) return VENV_PYTHON;
  const res = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'python', 'setup.sh')], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (res.status !== 0) throw new Error(`scripts/python/setup.sh failed (${res.status}):\n${res.stderr}`);
  ready = true;
  return VENV_PYTHON;
}

export type PythonReader = 'pyarrow' | 'polars' | 'duckdb';

export interface ReadBack {
  readonly reader: PythonReader;
  readonly columns: { name: string; type: string; nullable?: boolean }[];
  /** Timestamps as epoch ms, integers as decimal strings, floats as numbers. */
  readonly rows: Record<string, unknown>[];
}

export interface ParquetMeta {
  readonly rows: number;
  readonly row_groups: number;
  readonly columns: {
    path: string;
    physical: string;
    logical: string;
    encodings: string[];
    compression: string[];
  }[];
}

async function python(args: string[]): Promise<unknown> {
  const { stdout } = await run(ensurePython(), [READER, ...args], { maxBuffer: 512 * 1024 * 1024 });
  return JSON.parse(stdout) as unknown;
}

/** Reads one file, or a directory as one Hive-partitioned table (`hive: true`), with one reader. */
export async function readDataset(
  reader: PythonReader,
  path: string,
  opts: { hive?: boolean; format?: 'parquet' | 'arrow' | 'ndjson' } = {},
): Promise<ReadBack> {
  const args = [
    reader,
    path,
    ...(opts.hive === true ? ['--hive'] : []),
    '--format',
    opts.format ?? 'parquet',
  ];
  return (await python(args)) as ReadBack;
}

/** A Parquet file's footer as pyarrow reports it: physical/logical types, encodings, codecs. */
export async function parquetMeta(path: string): Promise<ParquetMeta> {
  return (await python(['parquet-meta', path])) as ParquetMeta;
}
