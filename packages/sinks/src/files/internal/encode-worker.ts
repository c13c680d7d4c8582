/**
 * Encodes one column batch into a file (Parquet via parquet-wasm, Arrow IPC via apache-arrow, or
 * NDJSON) and writes it atomically: `.tmp` under the staging directory, fsync, rename into place,
 * fsync of the target directory. Runs in a worker thread (heavy encoding off the event loop) or
 * inline when the pool has no threads.
 *
 * This file is also a worker entry: under vitest it runs from source through Node's own type
 * stripping, so it uses erasable TypeScript only and imports nothing relative but types.
 */
import {
  Field,
  Float64,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimestampMillisecond,
  Uint64,
  Utf8,
  makeData,
  tableToIPC,
  vectorFromArray,
} from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import {
  Compression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  transformParquetStream,
  writeParquet,
} from 'parquet-wasm';
import type { RecordBatch as WasmRecordBatch, WriterProperties } from 'parquet-wasm';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { ColumnBatch, ColumnData, NumericColumn } from './column-data.js';

/** File formats the dataset writer produces. */
export type EncodeFormat = 'parquet' | 'arrow' | 'ndjson';

/** What a finished job reports. */
export interface EncodeResult {
  /** Size of the file written. */
  readonly bytes: number;
}

function bitmap(valid: Uint8Array | undefined, n: number): { nullBitmap?: Uint8Array; nullCount: number } {
  if (valid === undefined) return { nullCount: 0 };
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (valid[i] === 1) bits[i >> 3]! |= 1 << (i & 7);
    else nulls++;
  }
  return nulls === 0 ? { nullCount: 0 } : { nullBitmap: bits, nullCount: nulls };
}

/** Epoch-ms doubles to the little-endian int64 buffer Arrow wants, without a BigInt per row. */
function msToInt64(values: Float64Array): BigInt64Array {
  const out = new BigInt64Array(values.length);
  const words = new Int32Array(out.buffer);
  for (let i = 0; i < values.length; i++) {
    const ms = values[i]!;
    const hi = Math.floor(ms / 4294967296);
    words[2 * i] = (ms - hi * 4294967296) | 0;
    words[2 * i + 1] = hi | 0;
  }
  return out;
}

const encoder = new TextEncoder();

function dictUtf8(dict: string[], indices: Int32Array): Data<Utf8> {
  const encoded = dict.map((s) => encoder.encode(s));
  let total = 0;
  for (let i = 0; i < indices.length; i++) total += encoded[indices[i]!]!.length;
  const offsets = new Int32Array(indices.length + 1);
  const bytes = new Uint8Array(total);
  let pos = 0;
  for (let i = 0; i < indices.length; i++) {
    const e = encoded[indices[i]!]!;
    if (e.length < 16) for (let j = 0; j < e.length; j++) bytes[pos + j] = e[j]!;
    else bytes.set(e, pos);
    pos += e.length;
    offsets[i + 1] = pos;
  }
  return makeData({ type: new Utf8(), length: indices.length, valueOffsets: offsets, data: bytes });
}

function numericData(c: NumericColumn, n: number): Data<DataType> {
  const nulls = bitmap(c.valid, n);
  if (c.kind === 'float64')
    return makeData({ type: new Float64(), length: n, data: c.values as Float64Array, ...nulls });
  if (c.kind === 'uint64')
    return makeData({ type: new Uint64(), length: n, data: c.values as BigUint64Array, ...nulls });
  return makeData({
    type: new TimestampMillisecond('UTC'),
    length: n,
    data: msToInt64(c.values as Float64Array),
    ...nulls,
  });
}

const LEVEL_FIELDS = [new Field('price', new Float64(), false), new Field('volume', new Float64(), true)];
const LEVEL_STRUCT = new Struct(LEVEL_FIELDS);
const LEVEL_LIST = new List(new Field('item', LEVEL_STRUCT, false));

function columnData(c: ColumnData, n: number): { field: Field; data: Data<DataType> } {
  switch (c.kind) {
    case 'dict-utf8':
      return { field: new Field(c.name, new Utf8(), false), data: dictUtf8(c.dict, c.indices) };
    case 'utf8': {
      const data = vectorFromArray(c.values, new Utf8()).data[0]!;
      return { field: new Field(c.name, new Utf8(), c.nullable), data };
    }
    case 'levels': {
      const levels = c.price.length;
      const struct = makeData({
        type: LEVEL_STRUCT,
        length: levels,
        nullCount: 0,
        children: [
          makeData({ type: new Float64(), length: levels, data: c.price }),
          makeData({ type: new Float64(), length: levels, data: c.volume, ...bitmap(c.volumeValid, levels) }),
        ],
      });
      const data = makeData({
        type: LEVEL_LIST,
        length: n,
        nullCount: 0,
        valueOffsets: c.offsets,
        child: struct,
      });
      return { field: new Field(c.name, LEVEL_LIST, false), data };
    }
    default: {
      const type =
        c.kind === 'float64'
          ? new Float64()
          : c.kind === 'uint64'
            ? new Uint64()
            : new TimestampMillisecond('UTC');
      return { field: new Field(c.name, type, c.nullable), data: numericData(c, n) };
    }
  }
}

/** The batch as an apache-arrow table with the dataset's exact types and nullability. */
export function toArrowTable(batch: ColumnBatch): Table {
  const cols = batch.columns.map((c) => columnData(c, batch.rows));
  const schema = new Schema(cols.map((c) => c.field));
  const root = makeData({
    type: new Struct(schema.fields),
    length: batch.rows,
    nullCount: 0,
    children: cols.map((c) => c.data),
  });
  return new Table(schema, [new RecordBatch(schema, root)]);
}

/**
 * A float64 as a JSON number that every reader infers as a float: whole values keep a fraction
 * (`18.0`, not `18`), or a reader that guesses a file's types from its first rows (Polars'
 * `scan_ndjson`) makes the column Int64 and then fails on the next file's `18.87977`. Non-finite
 * values have no JSON number: null, as `JSON.stringify` writes them.
 */
export function jsonFloat(v: number): string {
  if (!Number.isFinite(v)) return 'null';
  const s = String(v);
  // String() of a whole value below 1e21 has neither '.' nor an exponent; -0 prints as "0".
  if (Number.isInteger(v) && !s.includes('e')) return Object.is(v, -0) ? '-0.0' : `${s}.0`;
  return s;
}

function jsonLevels(c: Extract<ColumnData, { kind: 'levels' }>, row: number): string {
  let out = '[';
  for (let j = c.offsets[row]!; j < c.offsets[row + 1]!; j++) {
    if (j > c.offsets[row]!) out += ',';
    out += `{"price":${jsonFloat(c.price[j]!)},"volume":${c.volumeValid[j] === 1 ? jsonFloat(c.volume[j]!) : 'null'}}`;
  }
  return out + ']';
}

/** One JSON value of column `c` at `row`, written by hand so floats stay floats ({@link jsonFloat}). */
function jsonValue(c: ColumnData, row: number): string {
  switch (c.kind) {
    case 'dict-utf8':
      return JSON.stringify(c.dict[c.indices[row]!]);
    case 'utf8':
      return JSON.stringify(c.values[row]);
    case 'levels':
      return jsonLevels(c, row);
    default:
      if (c.valid !== undefined && c.valid[row] !== 1) return 'null';
      // Times as ISO-8601 UTC and seq as a decimal string, as Kafka values carry them
      // (contract.md): exact digits for every reader (a JSON number past 2^53 or 2^63 is rounded
      // or refused by some), and castable to UBIGINT / UInt64.
      if (c.kind === 'timestamp-ms') return `"${new Date(c.values[row] as number).toISOString()}"`;
      if (c.kind === 'uint64') return `"${String(c.values[row])}"`;
      return jsonFloat(c.values[row] as number);
  }
}

function ndjson(batch: ColumnBatch): string {
  const keys = batch.columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  let out = '';
  for (let i = 0; i < batch.rows; i++) {
    for (let k = 0; k < batch.columns.length; k++) out += keys[k]! + jsonValue(batch.columns[k]!, i);
    out += '}\n';
  }
  return out;
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
 * - dictionary encoding for every column (as pyarrow), with a 256 KiB dictionary page (parquet-rs
 *   default: 1 MiB), so high-cardinality float columns (turnover) fall back to plain encoding
 *   sooner: ~2% smaller file; low-cardinality columns (`code`, `ts`, prices) stay dictionary-encoded;
 * - one row group per file up to 1 Mi rows; pages of 1 MiB (parquet-rs's default).
 */
export const DEFAULT_PARQUET_LAYOUT: ParquetLayout = {
  maxRowGroupRows: 1 << 20,
  dataPageBytes: 1024 * 1024,
  dictionaryPageBytes: 256 * 1024,
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
  if (format === 'ndjson') return encoder.encode(batches.map(ndjson).join(''));
  const tables = batches.map(toArrowTable);
  const table = tables.length === 1 ? tables[0]! : new Table(tables.flatMap((t) => t.batches));
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
    if (this.format !== 'parquet') {
      this.batches.push(batch);
      return;
    }
    try {
      this.parquet ??= startParquetStream(parquetProperties(this.layout));
      const table = toWasmTable(batch);
      try {
        for (const rb of table.recordBatches()) this.parquet.input.enqueue(rb);
      } finally {
        table.free();
      }
    } catch (cause) {
      this.fail(cause);
    }
  }

  /** Encodes what is left and writes the file atomically (see {@link writeAtomically}). */
  async end(stagingPath: string, finalPath: string): Promise<EncodeResult> {
    if (this.error !== undefined) throw this.error.cause;
    if (this.rows === 0) throw new Error('an encode session ended without rows');
    let parts: Uint8Array[];
    if (this.parquet !== undefined) {
      this.parquet.input.close();
      parts = await this.parquet.output;
    } else parts = [encodeBatches(this.batches.splice(0), this.format)];
    await writeAtomically(stagingPath, finalPath, parts);
    return { bytes: parts.reduce((n, p) => n + p.length, 0) };
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

/** Writes `bytes` (in order) to `stagingPath`, fsyncs, renames to `finalPath` and fsyncs its directory. */
export async function writeAtomically(
  stagingPath: string,
  finalPath: string,
  bytes: Uint8Array | readonly Uint8Array[],
): Promise<void> {
  await mkdir(dirname(stagingPath), { recursive: true });
  const fh = await open(stagingPath, 'wx');
  let closed = false;
  try {
    for (const part of bytes instanceof Uint8Array ? [bytes] : bytes) {
      let off = 0;
      while (off < part.length) off += (await fh.write(part, off, part.length - off)).bytesWritten;
    }
    await fh.sync();
    await fh.close();
    closed = true;
    const dir = dirname(finalPath);
    await mkdir(dir, { recursive: true });
    await rename(stagingPath, finalPath);
    // The rename itself is durable only once the directory entry is.
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch (err) {
    if (!closed) await fh.close().catch(() => undefined);
    await rm(stagingPath, { force: true });
    throw err;
  }
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
