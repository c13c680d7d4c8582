/**
 * Compaction's Parquet and Arrow IPC path: the rows of a partition's files re-encoded into files
 * of at most a given row count. Loaded on first use: apache-arrow and parquet-wasm are optional
 * peer dependencies of the package.
 */
import { Table, type RecordBatch } from 'apache-arrow';
import type { DatasetKind } from '../dataset-columns.js';
import { StatsCollector, type DeltaStats } from '../delta/delta-actions.js';
import { encodeArrowTable } from './encode-worker.js';
import { forEachTableRow, readTable } from './table-rows.js';

/** One encoded output file of a compaction. */
export interface FileChunk {
  readonly bytes: Uint8Array;
  readonly rows: number;
  /** Input bytes read since the previous chunk. */
  readonly bytesRead: number;
  /** Delta statistics of a Parquet chunk, from its rows before encoding. */
  readonly stats?: DeltaStats;
}

/** Delta statistics of the rows of an Arrow table of `dataset` (a file about to be written). */
function tableStats(table: Table, dataset: DatasetKind): DeltaStats {
  const collector = new StatsCollector(dataset);
  forEachTableRow(table, (row) => collector.add(row));
  return collector.stats();
}

/** The rows of the files at `paths`, in file order, as encoded files of at most `maxRows` rows. */
export async function* arrowChunks(
  read: (path: string) => Promise<Uint8Array>,
  paths: readonly string[],
  format: 'parquet' | 'arrow',
  maxRows: number,
  dataset: DatasetKind,
): AsyncGenerator<FileChunk> {
  let pending: RecordBatch[] = [];
  let pendingRows = 0;
  let bytesRead = 0;
  const cut = (): FileChunk => {
    // Batches are sliced at the row limit, so a file never exceeds it.
    const take: RecordBatch[] = [];
    let n = 0;
    while (n < maxRows && pending.length > 0) {
      const b = pending.shift()!;
      if (n + b.numRows <= maxRows) {
        take.push(b);
        n += b.numRows;
      } else {
        const k = maxRows - n;
        take.push(b.slice(0, k));
        pending.unshift(b.slice(k));
        n += k;
      }
    }
    pendingRows -= n;
    const table = new Table(take);
    const stats = format === 'parquet' ? tableStats(table, dataset) : undefined;
    const chunk = {
      bytes: encodeArrowTable(table, format),
      rows: n,
      bytesRead,
      ...(stats === undefined ? {} : { stats }),
    };
    bytesRead = 0;
    return chunk;
  };
  for (const path of paths) {
    const bytes = await read(path);
    bytesRead += bytes.length;
    for (const b of readTable(bytes, format === 'parquet').batches) {
      if (b.numRows === 0) continue;
      pending.push(b);
      pendingRows += b.numRows;
    }
    while (pendingRows >= maxRows) yield cut();
  }
  if (pendingRows > 0) yield cut();
  pending = [];
}
