/**
 * Delta tables written by quoteflow's local dataset writer for the reader tests (delta-readers,
 * delta-readers-s3) and the S3 benchmark: bars, a commit of each group as one checkpoint, and the
 * rows a reader gave back in a form to compare.
 */
import { expect } from 'vitest';
import type { Bar } from '../../packages/core/src/index.js';
import {
  DatasetLog,
  DatasetWriter,
  type SeriesWatermark,
  type ObjectStore,
} from '../../packages/sinks/src/index.js';
import type { DeltaReader, ReadBack, ReadRequest } from './python.js';

/**
 * The Delta readers of the Python reader server: delta-rs, Polars' scan_delta, Spark with
 * delta-spark, DuckDB's delta extension.
 */
export const DELTA_READERS: readonly DeltaReader[] = [
  'deltalake',
  'polars-delta',
  'spark-delta',
  'duckdb-delta',
];

/** A 1-minute (`klineType` 1) or daily (8) bar of `code` starting at `tsMs`, closing at `close`. */
export const bar = (code: string, klineType: 1 | 8, tsMs: number, close: number): Bar => ({
  type: 'bar',
  code,
  klineType,
  tsMs,
  open: close - 1,
  high: close + 1,
  low: close - 2,
  close,
  volume: 1000,
  turnover: null as unknown as number,
  readAtMs: tsMs + 30_000,
  receivedAtMs: tsMs + 30_100,
});

/** What a reader's rows say, one string a row, sorted: code, kline type, bar start (ms), close. */
export function rowsOf(back: ReadBack): string[] {
  return back.rows
    .map((r) => `${String(r.code)} ${String(r.kline_type)} ${String(r.ts)} ${String(r.close)}`)
    .sort();
}

/** {@link rowsOf} for the bars written. */
export const expected = (bars: readonly Bar[]): string[] =>
  bars.map((b) => `${b.code} ${b.klineType} ${b.tsMs} ${b.close}`).sort();

/** What each series (`CODE|K`) gains from `bars`: oldest and newest bar, rows. */
function seriesOf(bars: readonly Bar[]): Record<string, SeriesWatermark> {
  const out: Record<string, SeriesWatermark> = {};
  for (const b of bars) {
    const key = `${b.code}|${b.klineType}`;
    const w = out[key];
    out[key] =
      w === undefined
        ? { first: b.tsMs, last: b.tsMs, rows: 1 }
        : { first: Math.min(w.first, b.tsMs), last: Math.max(w.last, b.tsMs), rows: w.rows + 1 };
  }
  return out;
}

/**
 * Writes each group of bars and commits its files as one checkpoint; the paths committed. With
 * `series`, each commit also carries its series' watermarks (`domainMetadata` in the log).
 */
export async function commitEach(
  writer: DatasetWriter,
  log: DatasetLog,
  commits: Iterable<Iterable<Bar>>,
  opts: { series?: boolean } = {},
): Promise<string[]> {
  const paths: string[] = [];
  for (const group of commits) {
    // Kept only for the watermarks (a bench's commit may be a day of bars).
    const bars: Bar[] = [];
    for (const b of group) {
      writer.append(b);
      if (opts.series === true) bars.push(b);
    }
    const files = await writer.flush();
    paths.push(...files.map((f) => f.relativePath));
    await log.transaction((tx) =>
      tx.commit({
        operation: 'checkpoint',
        add: files.map((f) => ({
          path: f.relativePath,
          rows: f.rows,
          bytes: f.bytes,
          staged: f.stagedPath!,
        })),
        ...(opts.series === true ? { series: seriesOf(bars) } : {}),
      }),
    );
  }
  return paths;
}

/**
 * Writes `DIR/kline` with quoteflow's local dataset writer (Parquet), one commit (one Delta
 * version) per group of bars; `snapshotEvery` sets its log compaction; with `store` (an S3
 * store, `dir` then the local scratch directory) the table is committed there. Resolves with its log.
 */
export async function writeKlineTable(
  dir: string,
  commits: Iterable<Iterable<Bar>>,
  opts: { snapshotEvery?: number; store?: ObjectStore } = {},
): Promise<DatasetLog> {
  const writer = new DatasetWriter({ dir, format: 'parquet', encoderThreads: 0, publish: 'on-commit' });
  const log = await DatasetLog.open(dir, 'kline', opts);
  await commitEach(writer, log, commits);
  await writer.close();
  return log;
}

/** Every Delta reader's request for `base` at the newest version, then at each of `versions`. */
export function eachVersion(
  base: Omit<ReadRequest, 'reader' | 'version'>,
  versions: readonly number[],
): ReadRequest[] {
  return [undefined, ...versions].flatMap((version) =>
    DELTA_READERS.map((reader) => ({ ...base, reader, ...(version === undefined ? {} : { version }) })),
  );
}

/** Checks the answers to {@link eachVersion}'s requests: each version's rows are its commits'. */
export function expectEachVersion(
  backs: readonly ReadBack[],
  versions: readonly number[],
  commits: readonly (readonly Bar[])[],
): void {
  const at = [undefined, ...versions];
  expect(backs).toHaveLength(at.length * DELTA_READERS.length);
  for (const [i, back] of backs.entries()) {
    const version = at[Math.floor(i / DELTA_READERS.length)];
    const want = commits.slice(0, version === undefined ? commits.length : version + 1).flat();
    expect(rowsOf(back), `${back.reader} at version ${String(version ?? 'newest')}`).toEqual(expected(want));
  }
}
