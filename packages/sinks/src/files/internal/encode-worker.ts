/**
 * Encodes one column batch into a file (Parquet via parquet-wasm, Arrow IPC via apache-arrow, or
 * NDJSON) and writes it durably (core's `writeFileDurably`): `.tmp` under the staging directory,
 * fsync, rename into place, fsync of the target directory. Runs in a worker thread (heavy encoding off the event loop) or
 * inline when the pool has no threads.
 *
 * This file is also a worker entry: under vitest it runs from source through Node's own type
 * stripping, so it uses erasable TypeScript only and imports nothing relative but types (packages
 * resolve to their builds).
 */
import { Table, tableToIPC } from 'apache-arrow';
import {
  Compression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  transformParquetStream,
  writeParquet,
} from 'parquet-wasm';
import type { RecordBatch as WasmRecordBatch, WriterProperties } from 'parquet-wasm';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
// Core's one durable write, from its own entry point: a worker thread need not load all of core.
import { writeFileDurably } from '@quoteflow/core/write-file-durably';
import type { ColumnBatch } from './column-data.js';
import type { DeltaStats } from '../delta/delta-actions.js';
import type * as ArrowTableModule from './arrow-table.js';
import type * as BatchStatsModule from './batch-stats.js';
import type * as NdjsonRowsModule from './ndjson-rows.js';

// A worker entry imports nothing relative but types (see above): its helpers are loaded by URL,
// `.ts` from source (vitest, Node's type stripping), `.js` built.
const sibling = async <T>(name: string): Promise<T> =>
  (await import(
    new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href
  )) as T;
const { toArrowTable } = await sibling<typeof ArrowTableModule>('arrow-table');
const { BatchStats } = await sibling<typeof BatchStatsModule>('batch-stats');
const { ndjsonRows } = await sibling<typeof NdjsonRowsModule>('ndjson-rows');
const encoder = new TextEncoder();

/** File formats the dataset writer produces. */
export type EncodeFormat = 'parquet' | 'arrow' | 'ndjson';

/** What a finished job reports. */
export interface EncodeResult {
  /** Size of the file written. */
  readonly bytes: number;
  /** Its rows' Delta statistics, gathered as they were encoded. */
  readonly stats: DeltaStats;
}

/**
 * Where a Parquet file is cut into row groups and pages. The defaults suit datasets; tests shrink
 * them so a few hundred rows cross many page and row-group boundaries.
 */
export interface ParquetLayout {
  /** Rows per row group, at most. */
  readonly maxRowGroupRows: number;
  /** A data page is closed once it holds this many bytes (checked every `writeBatchRows` rows). */
  readonly dataPageBytes: number;
  /** A column's dictionary stops growing (PLAIN from then on) past this many bytes. */
  readonly dictionaryPageBytes: number;
  /** Rows parquet-rs encodes at a time, the granularity of the page-size check. */
  readonly writeBatchRows: number;
}

/**
 * The Parquet writer settings (parquet-wasm 0.8, i.e. parquet-rs), chosen by measuring
 * (`pnpm bench parquet`, 1M K-line rows):
 * - zstd at parquet-rs's default level 1, pyarrow's default too (parquet-wasm 0.8 exposes no level);
 * - dictionary encoding for every column (as pyarrow), with parquet-rs's (and pyarrow's) 1 MiB
 *   dictionary page: tables are read far more often than written. A day of 1,000 series' 1-minute
 *   bars (1.44M rows) read 20 to 25 % faster in Polars and DuckDB than with the 256 KiB page
 *   used before (its price columns fell back to plain encoding: 8.5 MB to decompress a row group
 *   instead of 3.0), for a file 10 % larger (13.0 MB, pyarrow's size for the same rows);
 * - one row group per file up to 1 Mi rows; pages of 1 MiB (parquet-rs's default).
 */
export const DEFAULT_PARQUET_LAYOUT: ParquetLayout = {
  maxRowGroupRows: 1 << 20,
  dataPageBytes: 1024 * 1024,
  dictionaryPageBytes: 1024 * 1024,
  writeBatchRows: 1024,
};

function parquetProperties(layout: ParquetLayout): WriterProperties {
  return new WriterPropertiesBuilder()
    .setCompression(Compression.ZSTD)
    .setDictionaryPageSizeLimit(layout.dictionaryPageBytes)
    .setDataPageSizeLimit(layout.dataPageBytes)
    .setWriteBatchSize(layout.writeBatchRows)
    .setCreatedBy('quoteflow (parquet-wasm)')
    .setMaxRowGroupSize(layout.maxRowGroupRows)
    .build();
}

/** The batch as a parquet-wasm table (an Arrow IPC stream crosses into wasm memory). */
function toWasmTable(batch: ColumnBatch): WasmTable {
  return WasmTable.fromIPCStream(tableToIPC(toArrowTable(batch), 'stream'));
}

/** Encodes batches (one file's rows, in order) into the bytes of one file, in one go. */
export function encodeBatches(
  batches: readonly ColumnBatch[],
  format: EncodeFormat,
  layout: ParquetLayout = DEFAULT_PARQUET_LAYOUT,
): Uint8Array {
  if (format === 'ndjson') return encoder.encode(batches.map(ndjsonRows).join(''));
  const tables = batches.map(toArrowTable);
  const table = tables.length === 1 ? tables[0]! : new Table(tables.flatMap((t) => t.batches));
  return encodeArrowTable(table, format, layout);
}

/** Encodes an Arrow table as one Parquet (zstd, the dataset layout) or Arrow IPC file. */
export function encodeArrowTable(
  table: Table,
  format: 'parquet' | 'arrow',
  layout: ParquetLayout = DEFAULT_PARQUET_LAYOUT,
): Uint8Array {
  // apache-arrow's zstd IPC is rejected by other readers (21.2), so IPC files stay uncompressed.
  if (format === 'arrow') return tableToIPC(table, 'file');
  // writeParquet consumes (frees) the wasm table.
  return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), parquetProperties(layout));
}

interface ParquetStream {
  readonly input: ReadableStreamDefaultController<WasmRecordBatch>;
  readonly output: Promise<Uint8Array[]>;
}

/**
 * One file encoded from batches that arrive while its rows are still being collected. Parquet
 * batches go straight into parquet-wasm's streaming writer (`transformParquetStream`), which
 * encodes and compresses each batch's pages as it comes: by the time the file is finished, most
 * of the encoding is done (measured: ~45 ms left after the last of eight 125k-row batches of a
 * 1M-row file, against ~700 ms for encoding it in one go), and the encoder thread works while the
 * writer's thread is still mapping records. Arrow IPC and NDJSON batches are kept and encoded at
 * the end. A failure is kept and raised by `end()`.
 */
export class EncodeSession {
  private readonly batches: ColumnBatch[] = [];
  private parquet: ParquetStream | undefined;
  private error: { readonly cause: unknown } | undefined;
  private rows = 0;
  private readonly stats = new BatchStats();
  private readonly format: EncodeFormat;
  private readonly layout: ParquetLayout;

  constructor(format: EncodeFormat, layout: ParquetLayout = DEFAULT_PARQUET_LAYOUT) {
    this.format = format;
    this.layout = layout;
  }

  /** Adds the next rows of the file. */
  push(batch: ColumnBatch): void {
    if (this.error !== undefined || batch.rows === 0) return;
    this.rows += batch.rows;
    this.stats.add(batch);
    if (this.format !== 'parquet') {
      this.batches.push(batch);
      return;
    }
    this.encode(() => toWasmTable(batch));
  }

  /**
   * Adds the next rows of a Parquet file as an Arrow table with the dataset's types (a compaction's
   * rows, read back from files): encoded as they come, like {@link EncodeSession.push}'s.
   */
  pushTable(table: Table): void {
    if (this.error !== undefined || table.numRows === 0) return;
    if (this.format !== 'parquet') throw new Error('pushTable encodes Parquet only');
    this.rows += table.numRows;
    this.encode(() => WasmTable.fromIPCStream(tableToIPC(table, 'stream')));
  }

  /** Hands the rows to the streaming Parquet writer (started on the first rows). */
  private encode(wasmTable: () => WasmTable): void {
    try {
      this.parquet ??= startParquetStream(parquetProperties(this.layout));
      const table = wasmTable();
      try {
        for (const rb of table.recordBatches()) this.parquet.input.enqueue(rb);
      } finally {
        table.free();
      }
    } catch (cause) {
      this.fail(cause);
    }
  }

  /**
   * Encodes what is left and writes the file durably: to `stagingPath`, fsync'd, renamed to
   * `finalPath`, its directory fsync'd (core's `writeFileDurably`).
   */
  async end(stagingPath: string, finalPath: string): Promise<EncodeResult> {
    if (this.error !== undefined) throw this.error.cause;
    if (this.rows === 0) throw new Error('an encode session ended without rows');
    let parts: Uint8Array[];
    if (this.parquet !== undefined) {
      this.parquet.input.close();
      parts = await this.parquet.output;
    } else parts = [encodeBatches(this.batches.splice(0), this.format)];
    await writeFileDurably(finalPath, parts, { tempPath: stagingPath });
    return { bytes: parts.reduce((n, p) => n + p.length, 0), stats: this.stats.stats() };
  }

  /** Drops the rows and the encoder's state. */
  abort(): void {
    this.fail(new Error('encode session aborted'));
  }

  private fail(cause: unknown): void {
    this.error ??= { cause };
    this.batches.length = 0;
    try {
      this.parquet?.input.error(cause);
    } catch {
      // already closed or errored
    }
  }
}

function startParquetStream(properties: WriterProperties): ParquetStream {
  let input: ReadableStreamDefaultController<WasmRecordBatch> | undefined;
  const source = new ReadableStream<WasmRecordBatch>({
    start(c) {
      input = c;
    },
  });
  // The wasm writer pulls batches from `source` as they are enqueued and yields the file's bytes.
  const output = (async () => {
    const reader = (
      (await transformParquetStream(source, properties)) as ReadableStream<Uint8Array>
    ).getReader();
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return parts;
      parts.push(value);
    }
  })();
  output.catch(() => undefined); // raised by end()
  return { input: input!, output };
}

/** Worker protocol: a session per file, opened, fed and ended (answered with its id) or aborted. */
export type EncodeRequest =
  | { readonly op: 'open'; readonly sid: number; readonly format: EncodeFormat }
  | { readonly op: 'push'; readonly sid: number; readonly batch: ColumnBatch }
  | { readonly op: 'end'; readonly sid: number; readonly stagingPath: string; readonly finalPath: string }
  | { readonly op: 'abort'; readonly sid: number };
export type EncodeResponse =
  | { readonly sid: number; readonly ok: true; readonly result: EncodeResult }
  | {
      readonly sid: number;
      readonly ok: false;
      readonly message: string;
      readonly stack: string | undefined;
    };

const port = parentPort;
if (
  !isMainThread &&
  port !== null &&
  (workerData as { quoteflowEncoder?: boolean } | null)?.quoteflowEncoder === true
) {
  const sessions = new Map<number, EncodeSession>();
  const failed = (sid: number, err: unknown): void => {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({ sid, ok: false, message: e.message, stack: e.stack } satisfies EncodeResponse);
  };
  port.on('message', (req: EncodeRequest) => {
    if (req.op === 'open') {
      sessions.set(req.sid, new EncodeSession(req.format));
      return;
    }
    const session = sessions.get(req.sid);
    if (session === undefined) return;
    if (req.op === 'push') {
      session.push(req.batch);
      return;
    }
    sessions.delete(req.sid);
    if (req.op === 'abort') {
      session.abort();
      return;
    }
    session.end(req.stagingPath, req.finalPath).then(
      (result) => port.postMessage({ sid: req.sid, ok: true, result } satisfies EncodeResponse),
      (err: unknown) => failed(req.sid, err),
    );
  });
}
