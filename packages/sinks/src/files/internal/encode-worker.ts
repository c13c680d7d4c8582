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
  Int64,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimestampMillisecond,
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
import type { ParquetEncoder } from '../dataset-writer.js';
import type * as NativeParquet from './parquet-native.js';

// A worker entry imports nothing relative but types (see above): the native writer is loaded by
// URL, `.ts` from source (vitest, Node's type stripping), `.js` built.
const native: typeof NativeParquet = await import(
  new URL(import.meta.url.endsWith('.ts') ? './parquet-native.ts' : './parquet-native.js', import.meta.url)
    .href
);

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
  if (c.kind === 'int64')
    return makeData({ type: new Int64(), length: n, data: c.values as BigInt64Array, ...nulls });
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
          : c.kind === 'int64'
            ? new Int64()
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

function ndjson(batch: ColumnBatch): string {
  let out = '';
  const iso = (ms: number): string => new Date(ms).toISOString();
  for (let i = 0; i < batch.rows; i++) {
    const row: Record<string, unknown> = {};
    for (const c of batch.columns) {
      if (c.kind === 'dict-utf8') row[c.name] = c.dict[c.indices[i]!];
      else if (c.kind === 'utf8') row[c.name] = c.values[i];
      else if (c.kind === 'levels') {
        const side: { price: number; volume: number | null }[] = [];
        for (let j = c.offsets[i]!; j < c.offsets[i + 1]!; j++)
          side.push({ price: c.price[j]!, volume: c.volumeValid[j] === 1 ? c.volume[j]! : null });
        row[c.name] = side;
      } else if (c.valid !== undefined && c.valid[i] !== 1) row[c.name] = null;
      // Times as ISO-8601 UTC and int64 as a string, as the Kafka values carry them (contract.md).
      else if (c.kind === 'timestamp-ms') row[c.name] = iso(c.values[i] as number);
      else if (c.kind === 'int64') row[c.name] = String(c.values[i]);
      else row[c.name] = c.values[i];
    }
    out += JSON.stringify(row) + '\n';
  }
  return out;
}

/**
 * The Parquet writer settings, chosen by measuring (`pnpm bench parquet`, 1M K-line rows):
 * - zstd at parquet-rs's default level 1, pyarrow's default too (parquet-wasm 0.8 exposes no level);
 * - dictionary encoding for every column (as pyarrow), with a 256 KiB dictionary page (parquet-rs
 *   default: 1 MiB), so high-cardinality float columns (turnover) fall back to plain encoding
 *   sooner: ~2% smaller file; low-cardinality columns (`code`, `ts`, prices) stay dictionary-encoded.
 *   Turning dictionaries off for the float columns saves no CPU in the wasm encoder (the zstd work
 *   grows by what the hashing saves) and costs up to 17% in size;
 * - one row group per file up to 1Mi rows.
 */
function parquetProperties(): WriterProperties {
  return new WriterPropertiesBuilder()
    .setCompression(Compression.ZSTD)
    .setDictionaryPageSizeLimit(256 * 1024)
    .setCreatedBy('quoteflow (parquet-wasm)')
    .setMaxRowGroupSize(1 << 20)
    .build();
}

/** The batch as a parquet-wasm table (an Arrow IPC stream crosses into wasm memory). */
function toWasmTable(batch: ColumnBatch): WasmTable {
  return WasmTable.fromIPCStream(tableToIPC(toArrowTable(batch), 'stream'));
}

/** Whether `encoder` is to write these rows: 'native' asked for, available and a flat schema. */
function useNative(encoder: ParquetEncoder, batch: ColumnBatch): boolean {
  return encoder === 'native' && native.nativeParquetAvailable && native.isNativeParquetBatch(batch);
}

const arrowSchemas = new Map<string, Uint8Array>();

/**
 * The Arrow IPC schema message of a batch's columns (what parquet-wasm and pyarrow store as
 * `ARROW:schema`), from a zero-row copy through {@link toArrowTable}; cached per schema.
 */
function arrowSchemaOf(batch: ColumnBatch): Uint8Array {
  const key = batch.columns
    .map((c) => `${c.name}:${c.kind}:${'nullable' in c ? String(c.nullable) : ''}`)
    .join(',');
  let out = arrowSchemas.get(key);
  if (out === undefined) {
    const empty: ColumnBatch = {
      rows: 0,
      columns: batch.columns.map((c): ColumnData => {
        if (c.kind === 'dict-utf8') return { ...c, indices: c.indices.subarray(0, 0) };
        if (c.kind === 'utf8') return { ...c, values: [] };
        if (c.kind === 'levels')
          return {
            ...c,
            offsets: c.offsets.subarray(0, 1),
            price: c.price.subarray(0, 0),
            volume: c.volume.subarray(0, 0),
            volumeValid: c.volumeValid.subarray(0, 0),
          };
        return { ...c, values: c.values.subarray(0, 0), valid: c.valid?.subarray(0, 0) };
      }),
    };
    const ipc = tableToIPC(toArrowTable(empty), 'stream');
    // The stream's first message: 0xFFFFFFFF, metadata length, the Schema flatbuffer (no body).
    const dv = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength);
    if (dv.getUint32(0, true) !== 0xffffffff) throw new Error('unexpected Arrow IPC stream');
    out = ipc.slice(0, 8 + dv.getInt32(4, true));
    arrowSchemas.set(key, out);
  }
  return out;
}

function nativeWriter(batch: ColumnBatch): InstanceType<typeof native.NativeParquetWriter> {
  return new native.NativeParquetWriter({
    arrowSchema: arrowSchemaOf(batch),
    createdBy: 'quoteflow (native parquet writer)',
  });
}

/** Encodes batches (one file's rows, in order) into the bytes of one file, in one go. */
export function encodeBatches(
  batches: readonly ColumnBatch[],
  format: EncodeFormat,
  parquetEncoder: ParquetEncoder = 'wasm',
): Uint8Array {
  if (format === 'ndjson') return encoder.encode(batches.map(ndjson).join(''));
  if (format === 'parquet' && batches.length > 0 && batches.every((b) => useNative(parquetEncoder, b))) {
    const w = nativeWriter(batches[0]!);
    for (const b of batches) w.push(b);
    // A fresh buffer of its own (Buffer.concat may return a slice of Node's pool, which cannot be
    // transferred to another thread).
    const parts = w.finish();
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
  const tables = batches.map(toArrowTable);
  const table = tables.length === 1 ? tables[0]! : new Table(tables.flatMap((t) => t.batches));
  // apache-arrow's zstd IPC is rejected by other readers (21.2), so IPC files stay uncompressed.
  if (format === 'arrow') return tableToIPC(table, 'file');
  // writeParquet consumes (frees) the wasm table.
  return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), parquetProperties());
}

/** Encodes a batch into the bytes of one file. */
export function encodeBatch(
  batch: ColumnBatch,
  format: EncodeFormat,
  parquetEncoder: ParquetEncoder = 'wasm',
): Uint8Array {
  return encodeBatches([batch], format, parquetEncoder);
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
  private native: InstanceType<typeof native.NativeParquetWriter> | undefined;
  private error: { readonly cause: unknown } | undefined;
  private rows = 0;
  private readonly format: EncodeFormat;
  private readonly parquetEncoder: ParquetEncoder;

  constructor(format: EncodeFormat, parquetEncoder: ParquetEncoder = 'wasm') {
    this.format = format;
    this.parquetEncoder = parquetEncoder;
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
      // The file's first rows choose the writer; a file never changes writers.
      if (this.native === undefined && this.parquet === undefined && useNative(this.parquetEncoder, batch))
        this.native = nativeWriter(batch);
      if (this.native !== undefined) {
        this.native.push(batch);
        return;
      }
      this.parquet ??= startParquetStream();
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
    if (this.native !== undefined) parts = this.native.finish();
    else if (this.parquet !== undefined) {
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
    this.native = undefined;
    try {
      this.parquet?.input.error(cause);
    } catch {
      // already closed or errored
    }
  }
}

function startParquetStream(): ParquetStream {
  let input: ReadableStreamDefaultController<WasmRecordBatch> | undefined;
  const source = new ReadableStream<WasmRecordBatch>({
    start(c) {
      input = c;
    },
  });
  // The wasm writer pulls batches from `source` as they are enqueued and yields the file's bytes.
  const output = (async () => {
    const reader = (
      (await transformParquetStream(source, parquetProperties())) as ReadableStream<Uint8Array>
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

/**
 * Worker protocol: a session per file, opened, fed and ended (answered with its id) or aborted;
 * or a piece: rows encoded on their own into a Parquet file's bytes, handed back (answered with
 * its id).
 */
export type EncodeRequest =
  | {
      readonly op: 'open';
      readonly sid: number;
      readonly format: EncodeFormat;
      readonly parquetEncoder: ParquetEncoder;
    }
  | { readonly op: 'push'; readonly sid: number; readonly batch: ColumnBatch }
  | { readonly op: 'end'; readonly sid: number; readonly stagingPath: string; readonly finalPath: string }
  | { readonly op: 'abort'; readonly sid: number }
  | {
      readonly op: 'piece';
      readonly sid: number;
      readonly batch: ColumnBatch;
      readonly parquetEncoder: ParquetEncoder;
    };
export type EncodeResponse =
  | { readonly sid: number; readonly ok: true; readonly result: EncodeResult; readonly bytes?: Uint8Array }
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
    if (req.op === 'piece') {
      let bytes: Uint8Array;
      try {
        bytes = encodeBatch(req.batch, 'parquet', req.parquetEncoder);
      } catch (err) {
        failed(req.sid, err);
        return;
      }
      const res: EncodeResponse = { sid: req.sid, ok: true, result: { bytes: bytes.length }, bytes };
      port.postMessage(res, bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : []);
      return;
    }
    if (req.op === 'open') {
      sessions.set(req.sid, new EncodeSession(req.format, req.parquetEncoder));
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
