// The Delta benches' reads (scripts/python/bench_read_delta.py): each table read by delta-rs,
// Polars' scan_delta and DuckDB's delta extension, against one Parquet file, best of `repeat`.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { S3Server } from '../../../test/support/s3.js';

/** One table's (or the baseline file's) best times in seconds, and the rows it read. */
export interface DeltaReadTiming {
  readonly deltalake?: number;
  readonly pyarrow?: number;
  readonly polars: number;
  readonly duckdb: number;
  /** DuckDB's query of a table attached once with `PIN_SNAPSHOT` (tables only). */
  readonly duckdbPinned?: number;
  /** DuckDB's time when its process finds no CA certificates (read from S3 over plain HTTP only). */
  readonly duckdbWithoutCaRoots?: number;
  readonly rows: number;
}

/** What bench_read_delta.py reads: tables by name, the baseline file(s), the S3 server of `s3://` paths. */
export interface DeltaReadSpec {
  readonly server?: S3Server;
  readonly tables: Record<string, string>;
  readonly file: string;
  /** The same rows as one object on the S3 server (answered as `fileS3`). */
  readonly fileS3?: string;
  /** Tables given a Delta checkpoint by delta-rs first. */
  readonly checkpoint?: readonly string[];
  readonly repeat: number;
}

const root = new URL('../../..', import.meta.url).pathname;

/** Runs the reads; resolves per table name (and `file`, `fileS3`) with the timings. */
export function readDeltaTables(spec: DeltaReadSpec): Record<string, DeltaReadTiming> {
  const { server, ...rest } = spec;
  const input = {
    ...rest,
    ...(server === undefined
      ? {}
      : {
          s3: {
            endpoint: server.endpoint,
            access_key_id: server.accessKeyId,
            secret_access_key: server.secretAccessKey,
            region: server.region,
          },
        }),
  };
  return JSON.parse(
    execFileSync(join(root, '.venv', 'bin', 'python'), [join(root, 'scripts/python/bench_read_delta.py')], {
      input: JSON.stringify(input),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  ) as Record<string, DeltaReadTiming>;
}

/** A time and its ratio to the baseline's: `0.123 (1.05x)`. */
export const timingCell = (t: number, base: number): string => `${t.toFixed(3)} (${(t / base).toFixed(2)}x)`;
