/**
 * A specialised Parquet writer for the flat datasets (kline): non-nested columns of utf8 (as
 * dictionary), float64 and timestamp(ms, UTC), each optionally nullable. It writes what the
 * general-purpose encoders do, with far less work per value (measured against pyarrow on the bench
 * table, see the README's "Parquet writer" section):
 *
 * - utf8: dictionary-encoded (PLAIN dictionary page + RLE_DICTIONARY data pages);
 * - timestamp: INT64, TIMESTAMP(MILLIS, isAdjustedToUTC) + converted type TIMESTAMP_MILLIS,
 *   DELTA_BINARY_PACKED (bars a fixed step apart pack to almost nothing);
 * - float64: dictionary-encoded while the dictionary stays under {@link DICT_LIMIT} entries,
 *   PLAIN from the page that overflows it on (as pyarrow does);
 * - nullable columns: definition levels as RLE/bit-packed hybrid (data page v1);
 * - every page zstd-compressed by `node:zlib` (level 1, pyarrow's default), one page per pushed
 *   batch (at most {@link PAGE_ROWS} rows);
 * - column statistics (null count, min, max) and column orders, so readers can prune;
 * - `ARROW:schema` in the key-value metadata (the caller's serialized Arrow schema), so Arrow
 *   readers get the exact types parquet-wasm's files gave them.
 *
 * Rows arrive in batches while the file is open ({@link NativeParquetWriter.push}): each batch is
 * encoded and compressed at once; {@link NativeParquetWriter.finish} only adds dictionary pages and
 * the footer. A row group holds up to {@link ROW_GROUP_ROWS} rows (cut between batches).
 *
 * This file is loaded by the encoder worker too: erasable TypeScript only.
 */
import * as zlib from 'node:zlib';
import type { ColumnBatch, ColumnData, DictUtf8Column, NumericColumn } from './column-data.js';

const MAGIC = Uint8Array.of(0x50, 0x41, 0x52, 0x31); // "PAR1"
/** Rows per data page (a batch bigger than this is cut into several pages). */
export const PAGE_ROWS = 256 * 1024;
/** Rows per row group, at most (a new one starts between batches). */
export const ROW_GROUP_ROWS = 1 << 20;
/** Distinct values a float64 column's dictionary may hold (1 MiB, pyarrow's dictionary page limit). */
export const DICT_LIMIT = 128 * 1024;
const ZSTD_LEVEL = 1;

// Parquet enums (parquet.thrift).
const TYPE_INT64 = 2;
const TYPE_DOUBLE = 5;
const TYPE_BYTE_ARRAY = 6;
const ENC_PLAIN = 0;
const ENC_RLE = 3;
const ENC_DELTA_BINARY_PACKED = 5;
const ENC_RLE_DICTIONARY = 8;
const CODEC_ZSTD = 6;
const PAGE_DATA = 0;
const PAGE_DICTIONARY = 2;
const REQUIRED = 0;
const OPTIONAL = 1;
const CONVERTED_UTF8 = 0;
const CONVERTED_TIMESTAMP_MILLIS = 9;

// Thrift compact protocol types.
const T_TRUE = 1;
const T_FALSE = 2;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_BINARY = 8;
const T_LIST = 9;
const T_STRUCT = 12;

/** A growable byte buffer with the primitive writes both Thrift and the encodings need. */
class Bytes {
  buf: Uint8Array;
  length = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }
  /** Unsigned LEB128 of a non-negative integer up to 2^53. */
  uvarint(v: number): void {
    this.ensure(10);
    let x = v;
    while (x >= 0x80) {
      this.buf[this.length++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.buf[this.length++] = x;
  }
  /** Zigzag LEB128 of an integer of magnitude below 2^52. */
  zigzag(v: number): void {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  u32le(v: number): void {
    this.ensure(4);
    this.buf[this.length++] = v & 0xff;
    this.buf[this.length++] = (v >>> 8) & 0xff;
    this.buf[this.length++] = (v >>> 16) & 0xff;
    this.buf[this.length++] = (v >>> 24) & 0xff;
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Thrift compact protocol writer: structs are written field by field, ids ascending. */
class Thrift {
  readonly out = new Bytes();
  private last: number[] = [0];
  private header(id: number, type: number): void {
    const delta = id - this.last[this.last.length - 1]!;
    if (delta > 0 && delta <= 15) this.out.byte((delta << 4) | type);
    else {
      this.out.byte(type);
      this.out.zigzag(id);
    }
    this.last[this.last.length - 1] = id;
  }
  i32(id: number, v: number): this {
    this.header(id, T_I32);
    this.out.zigzag(v);
    return this;
  }
  i16(id: number, v: number): this {
    this.header(id, T_I16);
    this.out.zigzag(v);
    return this;
  }
  i64(id: number, v: number): this {
    this.header(id, T_I64);
    this.out.zigzag(v);
    return this;
  }
  bool(id: number, v: boolean): this {
    this.header(id, v ? T_TRUE : T_FALSE);
    return this;
  }
  binary(id: number, b: Uint8Array): this {
    this.header(id, T_BINARY);
    this.out.uvarint(b.length);
    this.out.bytes(b);
    return this;
  }
  string(id: number, s: string): this {
    return this.binary(id, utf8.encode(s));
  }
  struct(id: number, body: (t: this) => void): this {
    this.header(id, T_STRUCT);
    this.structBody(body);
    return this;
  }
  /** A struct's fields and stop byte (a list element, or the top-level struct). */
  structBody(body: (t: this) => void): this {
    this.last.push(0);
    body(this);
    this.out.byte(0);
    this.last.pop();
    return this;
  }
  private listHeader(id: number, elem: number, n: number): void {
    this.header(id, T_LIST);
    if (n < 15) this.out.byte((n << 4) | elem);
    else {
      this.out.byte(0xf0 | elem);
      this.out.uvarint(n);
    }
  }
  structList<T>(id: number, items: readonly T[], body: (t: this, item: T) => void): this {
    this.listHeader(id, T_STRUCT, items.length);
    for (const item of items) this.structBody((t) => body(t, item));
    return this;
  }
  i32List(id: number, items: readonly number[]): this {
    this.listHeader(id, T_I32, items.length);
    for (const v of items) this.out.zigzag(v);
    return this;
  }
  stringList(id: number, items: readonly string[]): this {
    this.listHeader(id, T_BINARY, items.length);
    for (const s of items) {
      const b = utf8.encode(s);
      this.out.uvarint(b.length);
      this.out.bytes(b);
    }
    return this;
  }
}

const utf8 = new TextEncoder();

/** Bits needed for a non-negative integer below 2^53. */
function bitWidth(x: number): number {
  if (x < 4294967296) return 32 - Math.clz32(x);
  return 64 - Math.clz32(Math.floor(x / 4294967296));
}

/** Appends `count` values of `vals` from `from`, bit-packed LSB first at `width`, padded with 0 to a multiple of 8. */
function bitPack(out: Bytes, vals: ArrayLike<number>, from: number, count: number, width: number): void {
  const padded = (count + 7) & ~7;
  out.ensure((padded * width) / 8 + 8);
  const buf = out.buf;
  let pos = out.length;
  let acc = 0;
  let bits = 0;
  if (width <= 24) {
    const end = from + count;
    for (let i = from; i < end; i++) {
      acc |= vals[i]! << bits;
      bits += width;
      while (bits >= 8) {
        buf[pos++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    // Zero padding to the group of 8.
    for (let i = count; i < padded; i++) {
      bits += width;
      while (bits >= 8) {
        buf[pos++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
  } else {
    for (let i = 0; i < padded; i++) {
      let v = i < count ? vals[from + i]! : 0;
      let w = width;
      while (w > 0) {
        const k = Math.min(w, 16);
        acc |= (v % (1 << k)) << bits;
        v = Math.floor(v / (1 << k));
        w -= k;
        bits += k;
        while (bits >= 8) {
          buf[pos++] = acc & 0xff;
          acc >>>= 8;
          bits -= 8;
        }
      }
    }
  }
  out.length = pos;
}

/**
 * RLE / bit-packed hybrid of `n` values below 2^`width` (width <= 24): runs of 16+ equal values as
 * RLE runs, the rest as bit-packed groups of 8 (only the last group is padded).
 */
function hybrid(out: Bytes, vals: ArrayLike<number>, n: number, width: number): void {
  const valueBytes = (width + 7) >> 3;
  let i = 0;
  let lit = 0; // literals pending from `lit` to `i`
  const flush = (to: number): void => {
    const count = to - lit;
    if (count === 0) return;
    out.uvarint((((count + 7) >> 3) << 1) | 1);
    bitPack(out, vals, lit, count, width);
  };
  while (i < n) {
    const v = vals[i]!;
    let j = i + 1;
    while (j < n && vals[j] === v) j++;
    if (j - i >= 16) {
      const take = i > lit ? (8 - ((i - lit) & 7)) & 7 : 0;
      flush(i + take);
      out.uvarint((j - i - take) * 2);
      for (let b = 0; b < valueBytes; b++) out.byte((v >>> (8 * b)) & 0xff);
      lit = j;
    }
    i = j;
  }
  flush(n);
}

/** DELTA_BINARY_PACKED of integer-valued doubles (|v| < 2^52): blocks of 128, 4 miniblocks of 32. */
function deltaBinaryPacked(out: Bytes, vals: Float64Array, n: number): void {
  out.uvarint(128);
  out.uvarint(4);
  out.uvarint(n);
  out.zigzag(n > 0 ? vals[0]! : 0);
  const adj = new Float64Array(128);
  for (let start = 1; start < n; start += 128) {
    const end = Math.min(start + 128, n);
    let minDelta = Infinity;
    for (let i = start; i < end; i++) {
      const d = vals[i]! - vals[i - 1]!;
      if (d < minDelta) minDelta = d;
    }
    out.zigzag(minDelta);
    const widths = [0, 0, 0, 0];
    for (let m = 0; m < 4; m++) {
      const a = start + 32 * m;
      const b = Math.min(a + 32, end);
      let max = 0;
      for (let i = a; i < b; i++) {
        const v = vals[i]! - vals[i - 1]! - minDelta;
        adj[i - start] = v;
        if (v > max) max = v;
      }
      widths[m] = a < b ? bitWidth(max) : 0;
    }
    for (const w of widths) out.byte(w);
    for (let m = 0; m < 4; m++) {
      const a = 32 * m;
      const count = Math.min(32, end - start - a);
      if (count <= 0) break;
      if (widths[m]! > 0) {
        bitPack(out, adj, a, count, widths[m]!);
        // A partial miniblock is still padded to 32 values.
        const missing = ((32 - ((count + 7) & ~7)) * widths[m]!) / 8;
        out.ensure(missing);
        out.buf.fill(0, out.length, out.length + missing);
        out.length += missing;
      }
    }
  }
}

/**
 * Murmur3-style mix of a double's two words: integer-valued doubles have all-zero low words and
 * few varying high bits, so both words must reach every bit of the slot index.
 */
function hash(lo: number, hi: number): number {
  let h = Math.imul(lo, 0xcc9e2d51) ^ hi;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Open-addressing hash of float64 bit patterns to dictionary indices. */
class F64Dict {
  size = 0;
  values: Float64Array;
  private words: Int32Array;
  private slots: Int32Array;
  private mask: number;
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
    this.values = new Float64Array(1024);
    this.words = new Int32Array(this.values.buffer);
    this.slots = new Int32Array(4096);
    this.mask = 4095;
  }
  /** Index of the value with bits (lo, hi), added if new; -1 when the dictionary is full. */
  indexOf(lo: number, hi: number): number {
    let s = hash(lo, hi) & this.mask;
    const words = this.words;
    for (;;) {
      const e = this.slots[s]!;
      if (e === 0) break;
      if (words[2 * e - 2] === lo && words[2 * e - 1] === hi) return e - 1;
      s = (s + 1) & this.mask;
    }
    if (this.size >= this.limit) return -1;
    if (this.size === this.values.length) {
      const next = new Float64Array(this.size * 2);
      next.set(this.values);
      this.values = next;
      this.words = new Int32Array(next.buffer);
    }
    const idx = this.size++;
    this.words[2 * idx] = lo;
    this.words[2 * idx + 1] = hi;
    this.slots[s] = idx + 1;
    if (this.size * 2 > this.slots.length) this.rehash();
    return idx;
  }
  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let idx = 0; idx < this.size; idx++) {
      const lo = this.words[2 * idx]!;
      const hi = this.words[2 * idx + 1]!;
      let s = hash(lo, hi) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = idx + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Whether the native writer handles every column of `batch` (flat utf8-dictionary/float64/timestamp). */
export function isNativeParquetBatch(batch: ColumnBatch): boolean {
  return batch.columns.every(
    (c) => c.kind === 'dict-utf8' || c.kind === 'float64' || c.kind === 'timestamp-ms',
  );
}

interface Page {
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly uncompressed: number;
}

function zstd(b: Uint8Array): Uint8Array {
  return zlib.zstdCompressSync(b, { params: { [zlib.constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
}

/** Whether this Node has zstd in `node:zlib` (22.15+, 23.8+), which the native writer needs. */
export const nativeParquetAvailable: boolean = typeof zlib.zstdCompressSync === 'function';

function page(type: number, raw: Uint8Array, header: (t: Thrift) => void): Page {
  const body = zstd(raw);
  const t = new Thrift();
  t.structBody((s) => {
    s.i32(1, type).i32(2, raw.length).i32(3, body.length);
    header(s);
  });
  return { header: t.out.result().slice(), body, uncompressed: raw.length };
}

function dataPage(raw: Uint8Array, numValues: number, encoding: number): Page {
  return page(PAGE_DATA, raw, (t) =>
    t.struct(5, (d) => d.i32(1, numValues).i32(2, encoding).i32(3, ENC_RLE).i32(4, ENC_RLE)),
  );
}

/** Little-endian bytes of an integer-valued double as int64. */
function int64Bytes(v: number): Uint8Array {
  const b = new Uint8Array(8);
  const dv = new DataView(b.buffer);
  const hi = Math.floor(v / 4294967296);
  dv.setUint32(0, v - hi * 4294967296, true);
  dv.setInt32(4, hi, true);
  return b;
}

function float64Bytes(v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  return b;
}

/** The column's schema and encoding state within one row group. */
abstract class ColumnChunkWriter {
  readonly pages: Page[] = [];
  nulls = 0;
  values = 0;
  readonly encodings = new Set<number>([ENC_RLE]);
  readonly name: string;
  readonly nullable: boolean;
  constructor(name: string, nullable: boolean) {
    this.name = name;
    this.nullable = nullable;
  }
  abstract readonly physicalType: number;
  /** Encodes rows [from, to) of the column into one data page. */
  abstract addPage(c: ColumnData, from: number, to: number): void;
  /** The dictionary page, if any data page refers to one. */
  dictionaryPage(): Page | undefined {
    return undefined;
  }
  abstract stats(): { min: Uint8Array; max: Uint8Array } | undefined;

  /**
   * Definition levels of rows [from, to) (4-byte length + hybrid, bit width 1) into `out` for a
   * nullable column; returns the number of non-null values.
   */
  protected levels(out: Bytes, valid: Uint8Array | undefined, from: number, to: number): number {
    const n = to - from;
    this.values += n;
    if (!this.nullable) return n;
    const at = out.length;
    out.u32le(0);
    let present = n;
    if (valid === undefined) {
      out.uvarint(n * 2);
      out.byte(1);
    } else {
      const v = valid.subarray(from, to);
      present = 0;
      for (let i = 0; i < n; i++) present += v[i]!;
      hybrid(out, v, n, 1);
    }
    const len = out.length - at - 4;
    out.buf[at] = len & 0xff;
    out.buf[at + 1] = (len >>> 8) & 0xff;
    out.buf[at + 2] = (len >>> 16) & 0xff;
    out.buf[at + 3] = (len >>> 24) & 0xff;
    this.nulls += n - present;
    return present;
  }
}

class Utf8DictWriter extends ColumnChunkWriter {
  readonly physicalType = TYPE_BYTE_ARRAY;
  private readonly index = new Map<string, number>();
  private readonly dict: Uint8Array[] = [];
  private min: Uint8Array | undefined;
  private max: Uint8Array | undefined;
  private lastDict: string[] | undefined;
  private lastRemap: Int32Array | undefined;

  addPage(c: ColumnData, from: number, to: number): void {
    const col = c as DictUtf8Column;
    // One remap per batch dictionary (a batch is cut into several pages at most).
    if (this.lastDict !== col.dict) {
      this.lastDict = col.dict;
      this.lastRemap = Int32Array.from(col.dict, (s) => {
        let i = this.index.get(s);
        if (i === undefined) {
          i = this.dict.length;
          this.index.set(s, i);
          this.dict.push(utf8.encode(s));
        }
        return i;
      });
    }
    const remap = this.lastRemap!;
    const n = to - from;
    const ids = new Int32Array(n);
    const used = new Uint8Array(remap.length);
    for (let i = 0; i < n; i++) {
      const k = col.indices[from + i]!;
      used[k] = 1;
      ids[i] = remap[k]!;
    }
    for (let k = 0; k < used.length; k++) {
      if (used[k] === 0) continue;
      const b = this.dict[remap[k]!]!;
      if (this.min === undefined || Buffer.compare(b, this.min) < 0) this.min = b;
      if (this.max === undefined || Buffer.compare(b, this.max) > 0) this.max = b;
    }
    const out = new Bytes(1024 + n);
    this.levels(out, undefined, from, to);
    const width = Math.max(1, bitWidth(this.dict.length - 1));
    out.byte(width);
    hybrid(out, ids, n, width);
    this.encodings.add(ENC_RLE_DICTIONARY);
    this.pages.push(dataPage(out.result(), n, ENC_RLE_DICTIONARY));
  }

  override dictionaryPage(): Page | undefined {
    if (this.dict.length === 0) return undefined;
    const out = new Bytes(this.dict.reduce((n, b) => n + 4 + b.length, 0));
    for (const b of this.dict) {
      out.u32le(b.length);
      out.bytes(b);
    }
    this.encodings.add(ENC_PLAIN);
    return page(PAGE_DICTIONARY, out.result(), (t) =>
      t.struct(7, (d) => d.i32(1, this.dict.length).i32(2, ENC_PLAIN)),
    );
  }

  stats(): { min: Uint8Array; max: Uint8Array } | undefined {
    return this.min === undefined ? undefined : { min: this.min, max: this.max! };
  }
}

/** The non-null values of rows [from, to), and how many there are. */
function present(c: NumericColumn, from: number, to: number): Float64Array {
  const values = (c.values as Float64Array).subarray(from, to);
  if (c.valid === undefined) return values;
  const valid = c.valid.subarray(from, to);
  const out = new Float64Array(values.length);
  let k = 0;
  for (let i = 0; i < values.length; i++) if (valid[i] === 1) out[k++] = values[i]!;
  return out.subarray(0, k);
}

class Float64Writer extends ColumnChunkWriter {
  readonly physicalType = TYPE_DOUBLE;
  private readonly dict: F64Dict;
  private dictUsed = false;
  private plainOnly = false;
  /** Non-null values seen. */
  private seen = 0;
  private min = Infinity;
  private max = -Infinity;

  constructor(name: string, nullable: boolean, dictLimit: number) {
    super(name, nullable);
    this.dict = new F64Dict(dictLimit);
  }

  addPage(c: ColumnData, from: number, to: number): void {
    const col = c as NumericColumn;
    const vals = present(col, from, to);
    const n = vals.length;
    let min = this.min;
    let max = this.max;
    for (let i = 0; i < n; i++) {
      const v = vals[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    this.min = min;
    this.max = max;
    const out = new Bytes(1024 + (to - from) / 8 + 8 * n);
    this.levels(out, col.valid, from, to);
    let ids: Int32Array | undefined;
    if (!this.plainOnly && n > 0) {
      ids = new Int32Array(n);
      const words = new Int32Array(vals.buffer, vals.byteOffset, 2 * n);
      for (let i = 0; i < n; i++) {
        const idx = this.dict.indexOf(words[2 * i]!, words[2 * i + 1]!);
        // Full, or past 16Ki values with most values new so far (checked every 4096 values, so a
        // high-cardinality column gives up after some 20,000 lookups, not a page's worth; a
        // column of up to 16Ki distinct values, e.g. whole-number volumes, always keeps its).
        if (
          idx < 0 ||
          ((i & 4095) === 4095 && this.dict.size > 16384 && this.dict.size * 2 > this.seen + i + 1)
        ) {
          this.plainOnly = true;
          ids = undefined;
          break;
        }
        ids[i] = idx;
      }
    }
    // High cardinality (most values new: turnover-like columns): a dictionary only costs, so this
    // page and every later one are PLAIN (measured: turnover dictionary-encoded is 25% bigger).
    this.seen += n;
    if (ids !== undefined && this.dict.size * 2 > this.seen) {
      this.plainOnly = true;
      ids = undefined;
    }
    if (ids !== undefined) {
      this.dictUsed = true;
      const width = Math.max(1, bitWidth(this.dict.size - 1));
      out.byte(width);
      hybrid(out, ids, n, width);
      this.encodings.add(ENC_RLE_DICTIONARY);
      this.pages.push(dataPage(out.result(), to - from, ENC_RLE_DICTIONARY));
    } else {
      out.bytes(new Uint8Array(vals.buffer, vals.byteOffset, 8 * n));
      this.encodings.add(ENC_PLAIN);
      this.pages.push(dataPage(out.result(), to - from, ENC_PLAIN));
    }
  }

  override dictionaryPage(): Page | undefined {
    if (!this.dictUsed) return undefined;
    this.encodings.add(ENC_PLAIN);
    const raw = new Uint8Array(this.dict.values.buffer, 0, 8 * this.dict.size);
    return page(PAGE_DICTIONARY, raw, (t) => t.struct(7, (d) => d.i32(1, this.dict.size).i32(2, ENC_PLAIN)));
  }

  stats(): { min: Uint8Array; max: Uint8Array } | undefined {
    if (this.min > this.max) return undefined; // no non-NaN value
    // Zeros: min as -0, max as +0 (parquet.thrift, Statistics).
    return {
      min: float64Bytes(this.min === 0 ? -0 : this.min),
      max: float64Bytes(this.max === 0 ? 0 : this.max),
    };
  }
}

class TimestampWriter extends ColumnChunkWriter {
  readonly physicalType = TYPE_INT64;
  private min = Infinity;
  private max = -Infinity;

  addPage(c: ColumnData, from: number, to: number): void {
    const col = c as NumericColumn;
    const vals = present(col, from, to);
    const n = vals.length;
    for (let i = 0; i < n; i++) {
      const v = vals[i]!;
      if (v < this.min) this.min = v;
      if (v > this.max) this.max = v;
    }
    const out = new Bytes(1024 + n);
    this.levels(out, col.valid, from, to);
    deltaBinaryPacked(out, vals, n);
    this.encodings.add(ENC_DELTA_BINARY_PACKED);
    this.pages.push(dataPage(out.result(), to - from, ENC_DELTA_BINARY_PACKED));
  }

  stats(): { min: Uint8Array; max: Uint8Array } | undefined {
    return this.min > this.max ? undefined : { min: int64Bytes(this.min), max: int64Bytes(this.max) };
  }
}

function chunkWriter(c: ColumnData, dictLimit: number): ColumnChunkWriter {
  switch (c.kind) {
    case 'dict-utf8':
      return new Utf8DictWriter(c.name, false);
    case 'float64':
      return new Float64Writer(c.name, c.nullable, dictLimit);
    case 'timestamp-ms':
      return new TimestampWriter(c.name, c.nullable);
    default:
      throw new Error(`native parquet writer: unsupported column kind ${c.kind}`);
  }
}

interface RowGroup {
  readonly rows: number;
  readonly columns: ColumnChunkWriter[];
}

/** Options of {@link NativeParquetWriter}. */
export interface NativeParquetOptions {
  /** The Arrow IPC schema message stored (base64) as `ARROW:schema`; none if omitted. */
  readonly arrowSchema?: Uint8Array;
  readonly createdBy?: string;
  /** @defaultValue {@link PAGE_ROWS} */
  readonly pageRows?: number;
  /** @defaultValue {@link ROW_GROUP_ROWS} */
  readonly rowGroupRows?: number;
  /** Distinct values a float64 column's dictionary may hold. @defaultValue {@link DICT_LIMIT} */
  readonly dictLimit?: number;
}

/**
 * One Parquet file of a flat schema, written from batches in order (see the module TSDoc).
 * `arrowSchema` is the Arrow IPC schema message stored (base64) as `ARROW:schema`.
 */
export class NativeParquetWriter {
  private readonly groups: RowGroup[] = [];
  private current: { rows: number; columns: ColumnChunkWriter[] } | undefined;
  private schema: readonly ColumnData[] | undefined;
  private readonly arrowSchema: Uint8Array | undefined;
  private readonly createdBy: string;
  private readonly pageRows: number;
  private readonly rowGroupRows: number;
  private readonly dictLimit: number;

  constructor(options: NativeParquetOptions = {}) {
    this.dictLimit = options.dictLimit ?? DICT_LIMIT;
    this.arrowSchema = options.arrowSchema;
    this.createdBy = options.createdBy ?? 'quoteflow native parquet writer';
    this.pageRows = options.pageRows ?? PAGE_ROWS;
    this.rowGroupRows = options.rowGroupRows ?? ROW_GROUP_ROWS;
  }

  /** Encodes and compresses the next rows of the file. */
  push(batch: ColumnBatch): void {
    if (batch.rows === 0) return;
    if (!isNativeParquetBatch(batch)) throw new Error('native parquet writer: unsupported columns');
    if (this.schema === undefined) this.schema = batch.columns;
    else if (
      batch.columns.length !== this.schema.length ||
      batch.columns.some((c, i) => c.name !== this.schema![i]!.name || c.kind !== this.schema![i]!.kind)
    )
      throw new Error('native parquet writer: batches of different schemas');
    if (this.current !== undefined && this.current.rows + batch.rows > this.rowGroupRows) this.closeGroup();
    this.current ??= { rows: 0, columns: batch.columns.map((c) => chunkWriter(c, this.dictLimit)) };
    const cur = this.current;
    for (let from = 0; from < batch.rows; from += this.pageRows) {
      const to = Math.min(batch.rows, from + this.pageRows);
      batch.columns.forEach((c, i) => cur.columns[i]!.addPage(c, from, to));
    }
    cur.rows += batch.rows;
  }

  private closeGroup(): void {
    if (this.current !== undefined && this.current.rows > 0) this.groups.push(this.current);
    this.current = undefined;
  }

  /** The file's bytes, in order. */
  finish(): Uint8Array[] {
    this.closeGroup();
    if (this.schema === undefined) throw new Error('native parquet writer: no rows');
    const parts: Uint8Array[] = [MAGIC];
    let pos = MAGIC.length;
    const put = (b: Uint8Array): void => {
      parts.push(b);
      pos += b.length;
    };
    const t = new Thrift();
    const schema = this.schema;
    const groupsMeta = this.groups.map((g) => {
      const start = pos;
      const chunks = g.columns.map((w) => {
        const dict = w.dictionaryPage();
        const chunkStart = pos;
        let uncompressed = 0;
        let dictOffset: number | undefined;
        if (dict !== undefined) {
          dictOffset = pos;
          uncompressed += dict.header.length + dict.uncompressed;
          put(dict.header);
          put(dict.body);
        }
        const dataOffset = pos;
        for (const p of w.pages) {
          uncompressed += p.header.length + p.uncompressed;
          put(p.header);
          put(p.body);
        }
        return { w, chunkStart, dictOffset, dataOffset, uncompressed, compressed: pos - chunkStart };
      });
      return { g, start, chunks, compressed: pos - start };
    });

    t.structBody((m) => {
      m.i32(1, 2);
      m.structList(2, [undefined, ...schema], (s, c) => {
        if (c === undefined) {
          s.string(4, 'schema').i32(5, schema.length);
          return;
        }
        const ts = c.kind === 'timestamp-ms';
        const nullable = c.kind !== 'dict-utf8' && (c as NumericColumn).nullable;
        s.i32(1, c.kind === 'dict-utf8' ? TYPE_BYTE_ARRAY : ts ? TYPE_INT64 : TYPE_DOUBLE)
          .i32(3, nullable ? OPTIONAL : REQUIRED)
          .string(4, c.name);
        if (c.kind === 'dict-utf8') s.i32(6, CONVERTED_UTF8).struct(10, (l) => l.struct(1, () => undefined));
        else if (ts)
          s.i32(6, CONVERTED_TIMESTAMP_MILLIS).struct(10, (l) =>
            l.struct(8, (tt) => tt.bool(1, true).struct(2, (u) => u.struct(1, () => undefined))),
          );
      });
      m.i64(
        3,
        groupsMeta.reduce((n, g) => n + g.g.rows, 0),
      );
      m.structList(4, groupsMeta, (r, g) => {
        r.structList(1, g.chunks, (cc, ch) => {
          cc.i64(2, ch.chunkStart).struct(3, (md) => {
            md.i32(1, ch.w.physicalType)
              .i32List(
                2,
                [...ch.w.encodings].sort((a, b) => a - b),
              )
              .stringList(3, [ch.w.name])
              .i32(4, CODEC_ZSTD)
              .i64(5, ch.w.values)
              .i64(6, ch.uncompressed)
              .i64(7, ch.compressed)
              .i64(9, ch.dataOffset);
            if (ch.dictOffset !== undefined) md.i64(11, ch.dictOffset);
            const st = ch.w.stats();
            md.struct(12, (s) => {
              s.i64(3, ch.w.nulls);
              if (st !== undefined) s.binary(5, st.max).binary(6, st.min);
            });
          });
        });
        r.i64(
          2,
          g.chunks.reduce((n, c) => n + c.uncompressed, 0),
        )
          .i64(3, g.g.rows)
          .i64(5, g.start)
          .i64(6, g.compressed)
          .i16(7, groupsMeta.indexOf(g));
      });
      if (this.arrowSchema !== undefined) {
        const value = Buffer.from(this.arrowSchema).toString('base64');
        m.structList(5, [{ k: 'ARROW:schema', v: value }], (kv, e) => kv.string(1, e.k).string(2, e.v));
      }
      m.string(6, this.createdBy);
      // TypeDefinedOrder for every column: min/max are comparable by the type's order.
      m.structList(7, schema, (o) => o.struct(1, () => undefined));
    });
    const footer = t.out.result();
    put(footer);
    const tail = new Uint8Array(8);
    new DataView(tail.buffer).setUint32(0, footer.length, true);
    tail.set(MAGIC, 4);
    put(tail);
    return parts;
  }
}
