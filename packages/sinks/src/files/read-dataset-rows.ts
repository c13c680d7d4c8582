import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isKlineType, seriesKey } from '@quoteflow/core';
import { requirePackagesOf } from '../internal/optional-packages.js';
import type { FileSummary } from './dataset-log-options.js';
import type { SeriesWatermark } from './dataset-log-format.js';
import { FileSinkError } from './file-sink-error.js';

/**
 * Calls `onRow(value)` for every row of one dataset file (Parquet, Arrow IPC or NDJSON), in file
 * order, where `value(column)` reads a column of that row.
 */
export async function forEachDatasetRow(
  dir: string,
  relativePath: string,
  onRow: (value: (column: string) => unknown) => void,
  /** Only these columns are decoded from a Parquet file (the others read as undefined). */
  projection?: readonly string[],
  /** The file's format where its name does not say (a staged `….tmp` file). */
  format?: 'parquet' | 'arrow' | 'ndjson',
): Promise<void> {
  const bytes = await readFile(join(dir, relativePath));
  const parquet = format === undefined ? relativePath.endsWith('.parquet') : format === 'parquet';
  if (format === undefined ? relativePath.endsWith('.ndjson') : format === 'ndjson') {
    for (const line of bytes.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      const row = JSON.parse(line) as Record<string, unknown>;
      onRow((column) => row[column]);
    }
  } else {
    requirePackagesOf('datasets');
    const { forEachTableRow, readTable } = await import('./internal/table-rows.js');
    forEachTableRow(readTable(bytes, parquet, projection), onRow);
  }
}

/**
 * Calls `onRow(code, tsMs, value)` for every row of one kline dataset file, in file order, where
 * `value(column)` reads another column of that row; resolves with the file's kline type from the
 * Hive directory `kline_type=K`.
 */
export async function forEachKlineRow(
  dir: string,
  relativePath: string,
  onRow: (code: string, tsMs: number, value: (column: string) => unknown) => void,
  /** Columns besides `code` and `ts` that `value` reads; default every column. */
  otherColumns?: readonly string[],
): Promise<number> {
  const match = /(?:^|\/)kline_type=(\d+)(?:\/|$)/.exec(relativePath);
  if (match === null)
    throw new FileSinkError('QF_DATASET_LOG', `${relativePath}: no kline_type=K directory in its path`);
  await forEachDatasetRow(
    dir,
    relativePath,
    (value) => {
      const code = value('code');
      const ms = epochMsOf(value('ts'));
      if (typeof code === 'string' && Number.isFinite(ms)) onRow(code, ms, value);
    },
    otherColumns === undefined ? undefined : ['code', 'ts', ...otherColumns],
  );
  return Number(match[1]);
}

/** A timestamp as a file reader gives it (ms number or bigint, ISO string, Date) in epoch ms; NaN if none. */
export function epochMsOf(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return Date.parse(v);
  if (v instanceof Date) return v.getTime();
  return NaN;
}

/** Every bar start per `code` in one kline dataset file, in file order, with the file's kline type. */
export async function readKlineStarts(
  dir: string,
  relativePath: string,
): Promise<{ klineType: number; starts: Map<string, number[]> }> {
  const starts = new Map<string, number[]>();
  const klineType = await forEachKlineRow(
    dir,
    relativePath,
    (code, ms) => {
      let list = starts.get(code);
      if (list === undefined) starts.set(code, (list = []));
      list.push(ms);
    },
    [],
  );
  return { klineType, starts };
}

/**
 * Per `code` in one kline dataset file: its first and last bar start and its rows, folded as the
 * rows are read (a restart reads every file: no per-row arrays).
 */
export async function readKlineExtents(
  dir: string,
  relativePath: string,
): Promise<{ klineType: number; extents: Map<string, SeriesWatermark> }> {
  const extents = new Map<string, { first: number; last: number; rows: number }>();
  const klineType = await forEachKlineRow(
    dir,
    relativePath,
    (code, ms) => {
      const held = extents.get(code);
      if (held === undefined) extents.set(code, { first: ms, last: ms, rows: 1 });
      else {
        if (ms < held.first) held.first = ms;
        if (ms > held.last) held.last = ms;
        held.rows++;
      }
    },
    [],
  );
  return { klineType, extents };
}

/** One kline file as the dataset's commit log records it (series keyed by core's `seriesKey`): its rows, and per series what they hold. */
export async function summarizeKlineFile(dir: string, relativePath: string): Promise<FileSummary> {
  const { klineType, extents } = await readKlineExtents(dir, relativePath);
  let rows = 0;
  const series: Record<string, SeriesWatermark> = {};
  for (const [code, e] of extents) {
    rows += e.rows;
    if (isKlineType(klineType)) series[seriesKey(code, klineType)] = e;
  }
  return { rows, series };
}
