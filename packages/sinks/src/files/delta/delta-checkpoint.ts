import {
  Bool,
  DataType,
  Field,
  Int32,
  Int64,
  List,
  makeBuilder,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  tableFromIPC,
  tableToIPC,
  type Data,
} from 'apache-arrow';
import {
  Compression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  readParquet,
  writeParquet,
} from 'parquet-wasm';
import type { DeltaAction } from './delta-actions.js';

/**
 * A Delta classic (V1) checkpoint (PROTOCOL.md, "Checkpoints"): the table's whole state at a
 * version as one Parquet file, one action a row, one top-level column per action type (`txn`,
 * `add`, `remove`, `metaData`, `protocol`, `domainMetadata`), each row setting exactly one.
 * delta-rs, Polars (delta-rs) and DuckDB (delta-kernel-rs) read the newest checkpoint and the
 * commits after it instead of every commit. Every field is nullable, as in the checkpoints Spark
 * writes; maps are Parquet maps of `key` (required) to `value` (optional).
 */

const str = (name: string): Field => new Field(name, new Utf8(), true);
const long = (name: string): Field => new Field(name, new Int64(), true);
const bool = (name: string): Field => new Field(name, new Bool(), true);
const strings = (name: string): Field =>
  new Field(name, new List(new Field('element', new Utf8(), true)), true);
const stringMap = (name: string): Field =>
  new Field(
    name,
    new Map_<Utf8, Utf8>(
      new Field(
        'key_value',
        new Struct<{ key: Utf8; value: Utf8 }>([
          new Field('key', new Utf8(), false),
          new Field('value', new Utf8(), true),
        ]),
        false,
      ),
    ),
    true,
  );
const struct = (name: string, fields: Field[]): Field => new Field(name, new Struct(fields), true);

/** The checkpoint's columns (PROTOCOL.md's checkpoint schema, without the optional parsed stats). */
export const CHECKPOINT_FIELDS: readonly Field[] = [
  struct('txn', [str('appId'), long('version'), long('lastUpdated')]),
  struct('add', [
    str('path'),
    stringMap('partitionValues'),
    long('size'),
    long('modificationTime'),
    bool('dataChange'),
    str('stats'),
    stringMap('tags'),
  ]),
  struct('remove', [
    str('path'),
    long('deletionTimestamp'),
    bool('dataChange'),
    bool('extendedFileMetadata'),
    stringMap('partitionValues'),
    long('size'),
  ]),
  struct('metaData', [
    str('id'),
    str('name'),
    str('description'),
    struct('format', [str('provider'), stringMap('options')]),
    str('schemaString'),
    strings('partitionColumns'),
    stringMap('configuration'),
    long('createdTime'),
  ]),
  struct('protocol', [
    new Field('minReaderVersion', new Int32(), true),
    new Field('minWriterVersion', new Int32(), true),
    strings('readerFeatures'),
    strings('writerFeatures'),
  ]),
  struct('domainMetadata', [str('domain'), str('configuration'), bool('removed')]),
];

type Json = Record<string, unknown>;

/** A value shaped for Arrow's builders: 64-bit integers as bigint, structs by field name. */
function shape(type: DataType, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (type instanceof Int64) return BigInt(value as number);
  if (type instanceof Struct) {
    const v = value as Json;
    return Object.fromEntries(type.children.map((f) => [f.name, shape(f.type, v[f.name])]));
  }
  return value;
}

/** One column of the checkpoint as one Arrow chunk: the row's action of this type, or null. */
function column(field: Field, rows: readonly Json[]): Data {
  const builder = makeBuilder({ type: field.type, nullValues: [null, undefined] });
  for (const r of rows) builder.append(shape(field.type, r[field.name]));
  return builder.finish().flush();
}

/**
 * The checkpoint of `actions` (the whole state: protocol, metaData, live `add`s, unexpired
 * `remove`s, `domainMetadata`, `txn`s; no `commitInfo`) as Parquet bytes (zstd).
 */
export function checkpointParquet(actions: readonly DeltaAction[]): Uint8Array {
  const rows = actions.filter((a) => !('commitInfo' in a)) as unknown as Json[];
  const children = CHECKPOINT_FIELDS.map((field) => column(field, rows));
  const type = new Struct([...CHECKPOINT_FIELDS]);
  const data = makeData({ type, length: rows.length, nullCount: 0, children });
  const table = new Table([new RecordBatch(new Schema([...CHECKPOINT_FIELDS]), data)]);
  const properties = new WriterPropertiesBuilder()
    .setCompression(Compression.ZSTD)
    .setCreatedBy('quoteflow (parquet-wasm)')
    .build();
  // writeParquet consumes (frees) the wasm table.
  return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), properties);
}

/** An Arrow value of a checkpoint's column as the JSON of its action (maps as objects, longs as numbers). */
function toJson(type: DataType, value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  // Types read from a file are the generic classes (`Int_` of 64 bits, not `Int64`).
  if (DataType.isInt(type) && type.bitWidth === 64) return Number(value as bigint);
  if (type instanceof Struct) {
    const row = value as Record<string, unknown>;
    const out: Json = {};
    for (const f of type.children as Field[]) {
      const v = toJson(f.type, row[f.name]);
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  }
  if (type instanceof Map_) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value as Iterable<[string, unknown]>) out[k] = v ?? null;
    return out;
  }
  if (type instanceof List) return [...(value as Iterable<unknown>)].map((v) => toJson(type.valueType, v));
  return value;
}

/**
 * The actions of a classic checkpoint (any writer's: quoteflow's, delta-rs', Spark's), one object
 * a row as a commit file holds them: what a log whose older commits expired is read from. Columns
 * quoteflow does not know (a `txn` of another writer's kind, parsed stats) are passed over.
 */
export function readCheckpointParquet(bytes: Uint8Array): Json[] {
  const table = tableFromIPC(readParquet(bytes).intoIPCStream());
  const known = new Set(CHECKPOINT_FIELDS.map((f) => f.name));
  const columns = table.schema.fields
    .filter((f) => known.has(f.name))
    .map((f) => ({ name: f.name, type: f.type as DataType, vector: table.getChild(f.name)! }));
  const actions: Json[] = [];
  for (let i = 0; i < table.numRows; i++)
    for (const c of columns) {
      const value = toJson(c.type, c.vector.get(i));
      if (value !== undefined) actions.push({ [c.name]: value });
    }
  return actions;
}

/** `_delta_log/<v padded to 20>.checkpoint.parquet`. */
export const checkpointName = (version: number): string =>
  `${String(version).padStart(20, '0')}.checkpoint.parquet`;

/** The `_last_checkpoint` file's JSON for a checkpoint of `actions` at `version` ({@link checkpointParquet}'s rows). */
export function lastCheckpoint(
  version: number,
  actions: readonly DeltaAction[],
  sizeInBytes: number,
): string {
  const rows = actions.filter((a) => !('commitInfo' in a));
  const numOfAddFiles = rows.filter((a) => 'add' in a).length;
  return JSON.stringify({ version, size: rows.length, sizeInBytes, numOfAddFiles });
}
