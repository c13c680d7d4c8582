/**
 * A column batch as an apache-arrow table with the dataset's exact types and nullability
 * (timestamp(ms, UTC), float64, utf8, uint64, list<struct<price, volume?>>): what the Parquet
 * and Arrow IPC files are written from.
 *
 * Loaded by the encoder worker too: erasable TypeScript only, relative imports of types only.
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
  vectorFromArray,
} from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import type { ColumnBatch, ColumnData, NumericColumn } from './column-data.js';

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

const utf8Encoder = new TextEncoder();

function dictUtf8(dict: string[], indices: Int32Array): Data<Utf8> {
  const encoded = dict.map((s) => utf8Encoder.encode(s));
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
