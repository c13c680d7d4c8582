/**
 * The Python readers (pyarrow, Polars, DuckDB, Spark) for interop tests: `ensurePython()` runs
 * `scripts/python/setup.sh` once (idempotent, fast when `.venv` is current), and the reads go to
 * the run's one `test/python/read_dataset.py serve` (a shared fixture, shared-fixtures-setup.ts),
 * which answers JSON: the readers are imported and Spark's JVM started once per run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { S3Server } from './s3.js';
import { sharedFixture } from './shared-fixtures.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const VENV_PYTHON = join(REPO_ROOT, '.venv', 'bin', 'python');

/**
 * Set by the integration project's global set-up (shared-fixtures-setup.ts), one file per run: once
 * it exists, `.venv` was checked in this run. The check imports every reader (about a CPU-second);
 * without the file each test file's worker made it again.
 */
export const PYTHON_READY_FILE_ENV = 'QF_PYTHON_READY_FILE';

let ready = false;

/** Creates or refreshes `.venv` (pyarrow, polars, duckdb, pyspark) once per run; throws with pip's output if it fails. */
export function ensurePython(): string {
  if (ready) return VENV_PYTHON;
  const readyFile = process.env[PYTHON_READY_FILE_ENV];
  if (readyFile === undefined || !existsSync(readyFile)) {
    const res = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'python', 'setup.sh')], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (res.status !== 0) throw new Error(`scripts/python/setup.sh failed (${res.status}):\n${res.stderr}`);
    if (readyFile !== undefined) writeFileSync(readyFile, '');
  }
  ready = true;
  return VENV_PYTHON;
}

export type PythonReader = 'pyarrow' | 'polars' | 'duckdb' | 'spark';
/**
 * Readers of a Delta table (delta-rs, Polars' scan_delta, Spark with delta-spark, DuckDB 1.4.4's
 * delta extension from PyPI in a venv of its own: scripts/python/duckdb-delta.sh).
 */
export type DeltaReader = 'deltalake' | 'polars-delta' | 'spark-delta' | 'duckdb-delta';

/**
 * What {@link readDatasets} reads: a file, or a directory as one Hive table, or a Delta table (a
 * directory, or `s3://BUCKET/PREFIX` on the S3-compatible server `s3`).
 */
export interface ReadRequest {
  readonly reader: PythonReader | DeltaReader;
  /** For a Delta reader: the table version to read (time travel); the newest without. */
  readonly version?: number;
  readonly path: string;
  /**
   * For a Delta reader of an `s3://` path: the server (plain HTTP, path-style). delta-rs and
   * Polars get it as `storage_options`, Spark through Hadoop's S3A (`s3a://`).
   */
  readonly s3?: S3Server;
  readonly hive?: boolean;
  readonly format?: 'parquet' | 'arrow' | 'ndjson';
}

export interface ReadBack {
  readonly reader: PythonReader | DeltaReader;
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

/** What read_dataset.py's `serve` answers for one line of requests. */
type ServeAnswer = { ok: unknown[] } | { error: string };

/** Sends `requests` to the run's reader server and resolves with its answers, in order. */
async function python(requests: readonly ReadRequest[] | readonly ParquetMetaRequest[]): Promise<unknown[]> {
  const { port } = await sharedFixture('python-reader');
  const line = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.end(`${JSON.stringify(requests.map(wire))}\n`);
  });
  const answer = JSON.parse(line) as ServeAnswer;
  if ('error' in answer) throw new Error(`read_dataset.py: ${answer.error}`);
  return answer.ok;
}

/** A request as read_dataset.py takes it (the S3 server's endpoint and identity only). */
function wire(r: ReadRequest | ParquetMetaRequest): unknown {
  if (!('s3' in r) || r.s3 === undefined) return r;
  const { endpoint, accessKeyId, secretAccessKey, region } = r.s3;
  return {
    ...r,
    s3: { endpoint, access_key_id: accessKeyId, secret_access_key: secretAccessKey, region },
  };
}

interface ParquetMetaRequest {
  readonly reader: 'parquet-meta';
  readonly path: string;
}

/**
 * Several reads in one request to the reader server, answered in order.
 */
export async function readDatasets(requests: readonly ReadRequest[]): Promise<ReadBack[]> {
  return (await python(requests)) as ReadBack[];
}

/** Reads one file, or a directory as one Hive-partitioned table (`hive: true`), with one reader. */
export async function readDataset(
  reader: PythonReader,
  path: string,
  opts: { hive?: boolean; format?: 'parquet' | 'arrow' | 'ndjson' } = {},
): Promise<ReadBack> {
  const [back] = await readDatasets([{ reader, path, ...opts }]);
  return back!;
}

/** A Parquet file's footer as pyarrow reports it: physical/logical types, encodings, codecs. */
export async function parquetMeta(path: string): Promise<ParquetMeta> {
  const [meta] = await python([{ reader: 'parquet-meta', path }]);
  return meta as ParquetMeta;
}
