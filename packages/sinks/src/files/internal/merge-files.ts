/**
 * Loaded on first use (by `compactFiles`): apache-arrow and parquet-wasm are optional peer
 * dependencies of the package.
 */
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Table, type RecordBatch } from 'apache-arrow';
import { writeFileDurably } from '@quoteflow/core/internal';
import type { DatasetKind } from '../dataset-columns.js';
import type { DatasetFormat } from '../dataset-writer-options.js';
import type { LogFile } from '../dataset-log-format.js';
import { StatsCollector, type DeltaStats } from '../delta/delta-actions.js';
import { EncodeSession, encodeArrowTable } from './encode-worker.js';
import { forEachTableRow, readTable } from './table-rows.js';

/** Rows encoded between two turns of the event loop (about 50 ms of encoding on a loaded core). */
const SLICE_ROWS = 65_536;

/** Options of {@link mergeFiles}. */
export interface MergeFilesOptions {
  readonly dataset: DatasetKind;
  readonly format: DatasetFormat;
  /** An output file holds at most this many rows. */
  readonly maxRows: number;
  /** The directory the output files are written to (each durably, under its final name). */
  readonly outDir: string;
  /** The name of the `n`th output file (from 1). */
  readonly nameOf: (n: number) => string;
  /** Reads an input file's bytes (locally, or from object storage). */
  readonly read: (path: string) => Promise<Uint8Array>;
  /** Stops between slices (the outputs written so far stay for the caller to remove). */
  readonly signal?: AbortSignal;
}

/** One output file of a merge. */
export interface MergedFile {
  readonly name: string;
  readonly rows: number;
  readonly bytes: number;
  /** Delta statistics of a Parquet output, from its rows before encoding. */
  readonly stats?: DeltaStats;
}

/** What {@link mergeFiles} wrote. */
export interface MergeResult {
  readonly outputs: readonly MergedFile[];
  readonly rows: number;
  readonly bytesRead: number;
}

/**
 * The rows of `files` (one format), in file order, written again as files of at most `maxRows`
 * rows, exactly the same rows (record batches are sliced and concatenated, never re-typed).
 * Parquet outputs are encoded as they fill (parquet-wasm's streaming writer), slice by slice with
 * a turn of the event loop between slices, so a merge of millions of rows in a running sync holds
 * up its polling and checkpoints for one slice at a time, not for the whole file.
 */
export async function mergeFiles(
  files: readonly LogFile[],
  options: MergeFilesOptions,
): Promise<MergeResult> {
  const outputs: MergedFile[] = [];
  let out: Output | undefined;
  let rows = 0;
  let bytesRead = 0;
  const finish = async (): Promise<void> => {
    if (out === undefined) return;
    const done = out;
    out = undefined;
    const name = options.nameOf(outputs.length + 1);
    outputs.push(await done.end(name, join(options.outDir, name)));
  };
  try {
    for (const file of files) {
      options.signal?.throwIfAborted();
      const bytes = await options.read(file.path);
      bytesRead += bytes.length;
      for (const rowsOf of decode(bytes, options.format)) {
        let batch = rowsOf;
        while (batch.numRows > 0) {
          out ??= newOutput(options);
          const take = Math.min(options.maxRows - out.rows, batch.numRows, SLICE_ROWS);
          out.push(batch.slice(0, take));
          rows += take;
          batch = batch.slice(take);
          if (out.rows >= options.maxRows) await finish();
          await nextTurn();
          options.signal?.throwIfAborted();
        }
      }
    }
    await finish();
  } catch (err) {
    out?.abort();
    throw err;
  }
  return { outputs, rows, bytesRead };
}

/** A file's rows as record batches (NDJSON: one batch-like run of lines). */
function decode(bytes: Uint8Array, format: DatasetFormat): Iterable<Rows> {
  if (format === 'ndjson') {
    const lines = Buffer.from(bytes)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    return [new LineRows(lines)];
  }
  return readTable(bytes, format === 'parquet').batches.filter((b) => b.numRows > 0);
}

/** What is sliced: Arrow record batches, or NDJSON lines. */
type Rows = RecordBatch | LineRows;

class LineRows {
  constructor(readonly lines: readonly string[]) {}
  get numRows(): number {
    return this.lines.length;
  }
  slice(from: number, to?: number): LineRows {
    return new LineRows(this.lines.slice(from, to));
  }
}

interface Output {
  readonly rows: number;
  push(rows: Rows): void;
  end(name: string, path: string): Promise<MergedFile>;
  abort(): void;
}

function newOutput(options: MergeFilesOptions): Output {
  if (options.format === 'parquet') return new ParquetOutput(options.dataset);
  return new BufferedOutput(options.format);
}

/** A Parquet output: encoded slice by slice, its Delta statistics collected on the way. */
class ParquetOutput implements Output {
  rows = 0;
  readonly #session = new EncodeSession('parquet');
  readonly #stats: StatsCollector;

  constructor(dataset: DatasetKind) {
    this.#stats = new StatsCollector(dataset);
  }

  push(rows: Rows): void {
    const table = new Table([rows as RecordBatch]);
    forEachTableRow(table, (row) => this.#stats.add(row));
    this.#session.pushTable(table);
    this.rows += table.numRows;
  }

  async end(name: string, path: string): Promise<MergedFile> {
    const { bytes } = await this.#session.end(`${path}.tmp`, path);
    return { name, rows: this.rows, bytes, stats: this.#stats.stats() };
  }

  abort(): void {
    this.#session.abort();
  }
}

/** An Arrow IPC or NDJSON output: slices kept, encoded at the end (no encoding to speak of). */
class BufferedOutput implements Output {
  rows = 0;
  readonly #parts: Rows[] = [];

  constructor(readonly format: 'arrow' | 'ndjson') {}

  push(rows: Rows): void {
    this.#parts.push(rows);
    this.rows += rows.numRows;
  }

  async end(name: string, path: string): Promise<MergedFile> {
    const bytes =
      this.format === 'ndjson'
        ? new TextEncoder().encode(`${this.#parts.flatMap((p) => (p as LineRows).lines).join('\n')}\n`)
        : encodeArrowTable(new Table(this.#parts as RecordBatch[]), 'arrow');
    await writeFileDurably(path, bytes, { tempPath: `${path}.tmp` });
    return { name, rows: this.rows, bytes: bytes.length };
  }

  abort(): void {
    this.#parts.length = 0;
  }
}
