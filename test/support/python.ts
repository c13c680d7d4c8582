/**
 * The Python readers (pyarrow, Polars, DuckDB, Spark) for interop tests: `ensurePython()` runs
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

/** Creates or refreshes `.venv` (pyarrow, polars, duckdb, pyspark); throws with pip's output if it fails. */
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

export type PythonReader = 'pyarrow' | 'polars' | 'duckdb' | 'spark';

/** What {@link readDatasets} reads: a file, or a directory as one Hive table. */
export interface ReadRequest {
  readonly reader: PythonReader;
  readonly path: string;
  readonly hive?: boolean;
  readonly format?: 'parquet' | 'arrow' | 'ndjson';
}

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

async function python(args: string[], stdin?: string): Promise<unknown> {
  const child = run(ensurePython(), [READER, ...args], { maxBuffer: 512 * 1024 * 1024 });
  if (stdin !== undefined) child.child.stdin?.end(stdin);
  const { stdout } = await child;
  return JSON.parse(stdout) as unknown;
}

/**
 * Several reads from one Python process, answered in order: Spark starts its JVM (seconds) once
 * for all of them instead of once per read.
 */
export async function readDatasets(requests: readonly ReadRequest[]): Promise<ReadBack[]> {
  return (await python(['batch'], JSON.stringify(requests))) as ReadBack[];
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
