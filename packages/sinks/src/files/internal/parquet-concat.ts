/**
 * Joins Parquet files of one schema into one file, row groups in order, by copying their column
 * chunks byte for byte and rewriting only the footer (Thrift compact protocol). Lets several
 * encoder threads encode the pieces of one file in parallel.
 *
 * The joined file has no page index (column/offset indexes: optional in the format, and readers
 * without them just read the row group's pages); everything else in the footer (schema, the
 * embedded Arrow schema, statistics, encodings) is kept as written, offsets shifted.
 *
 * This file is loaded by the encoder worker too: erasable TypeScript only.
 */

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"

// Thrift compact protocol types.
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

type Value = number | bigint | boolean | Uint8Array | ThriftList | ThriftMap | ThriftStruct;
interface ThriftList {
  readonly kind: 'list';
  readonly type: number;
  readonly elem: number;
  readonly items: Value[];
}
interface ThriftMap {
  readonly kind: 'map';
  readonly key: number;
  readonly val: number;
  readonly entries: [Value, Value][];
}
/** Fields by id, in the order read. */
type ThriftStruct = Map<number, { type: number; value: Value }>;

class Reader {
  pos = 0;
  private readonly buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.buf = buf;
  }
  byte(): number {
    if (this.pos >= this.buf.length) throw new Error('parquet footer: truncated');
    return this.buf[this.pos++]!;
  }
  uvarint(): bigint {
    let out = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      out |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return out;
      shift += 7n;
      if (shift > 70n) throw new Error('parquet footer: bad varint');
    }
  }
  zigzag(): bigint {
    const u = this.uvarint();
    return (u & 1n) === 0n ? u >> 1n : -(u >> 1n) - 1n;
  }
  value(type: number): Value {
    switch (type) {
      case T_TRUE:
        return true;
      case T_FALSE:
        return false;
      case T_BYTE:
        return this.byte();
      case T_I16:
      case T_I32:
        return Number(this.zigzag());
      case T_I64:
        return this.zigzag();
      case T_DOUBLE: {
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case T_BINARY: {
        const n = Number(this.uvarint());
        if (this.pos + n > this.buf.length) throw new Error('parquet footer: truncated');
        const v = this.buf.slice(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case T_LIST:
      case T_SET: {
        const h = this.byte();
        const elem = h & 0x0f;
        const n = h >> 4 === 15 ? Number(this.uvarint()) : h >> 4;
        const items: Value[] = [];
        // Booleans inside a collection are one byte each (1 = true).
        for (let i = 0; i < n; i++)
          items.push(elem === T_TRUE || elem === T_FALSE ? this.byte() === 1 : this.value(elem));
        return { kind: 'list', type, elem, items };
      }
      case T_MAP: {
        const n = Number(this.uvarint());
        const kv = n > 0 ? this.byte() : 0;
        const key = kv >> 4;
        const val = kv & 0x0f;
        const entries: [Value, Value][] = [];
        for (let i = 0; i < n; i++) entries.push([this.value(key), this.value(val)]);
        return { kind: 'map', key, val, entries };
      }
      case T_STRUCT:
        return this.struct();
      default:
        throw new Error(`parquet footer: unknown thrift type ${type}`);
    }
  }
  struct(): ThriftStruct {
    const out: ThriftStruct = new Map();
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return out;
      const type = h & 0x0f;
      const delta = h >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      out.set(id, { type, value: this.value(type) });
      last = id;
    }
  }
}

class Writer {
  private buf = new Uint8Array(1 << 16);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }
  uvarint(v: bigint): void {
    let x = v;
    while (x >= 0x80n) {
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.byte(Number(x));
  }
  zigzag(v: bigint): void {
    this.uvarint(v >= 0n ? v << 1n : (-v << 1n) - 1n);
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  value(type: number, v: Value): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return; // carried by the field header
      case T_BYTE:
        return this.byte(v as number);
      case T_I16:
      case T_I32:
        return this.zigzag(BigInt(v as number));
      case T_I64:
        return this.zigzag(v as bigint);
      case T_DOUBLE: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, v as number, true);
        return this.bytes(b);
      }
      case T_BINARY: {
        const b = v as Uint8Array;
        this.uvarint(BigInt(b.length));
        return this.bytes(b);
      }
      case T_LIST:
      case T_SET: {
        const l = v as ThriftList;
        const n = l.items.length;
        if (n < 15) this.byte((n << 4) | l.elem);
        else {
          this.byte(0xf0 | l.elem);
          this.uvarint(BigInt(n));
        }
        for (const item of l.items) {
          if (l.elem === T_TRUE || l.elem === T_FALSE) this.byte(item === true ? 1 : 2);
          else this.value(l.elem, item);
        }
        return;
      }
      case T_MAP: {
        const m = v as ThriftMap;
        this.uvarint(BigInt(m.entries.length));
        if (m.entries.length > 0) this.byte((m.key << 4) | m.val);
        for (const [k, val] of m.entries) {
          this.value(m.key, k);
          this.value(m.val, val);
        }
        return;
      }
      case T_STRUCT:
        return this.struct(v as ThriftStruct);
      default:
        throw new Error(`parquet footer: unknown thrift type ${type}`);
    }
  }
  struct(s: ThriftStruct): void {
    let last = 0;
    for (const id of [...s.keys()].sort((a, b) => a - b)) {
      const f = s.get(id)!;
      const type = f.type === T_TRUE || f.type === T_FALSE ? (f.value === true ? T_TRUE : T_FALSE) : f.type;
      const delta = id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(id));
      }
      this.value(type, f.value);
      last = id;
    }
    this.byte(0);
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const i64 = (s: ThriftStruct, id: number): bigint | undefined => {
  const f = s.get(id);
  return f === undefined ? undefined : (f.value as bigint);
};
const listOf = (s: ThriftStruct, id: number): ThriftList => {
  const f = s.get(id);
  if (f === undefined || f.type !== T_LIST) throw new Error(`parquet footer: field ${id} is not a list`);
  return f.value as ThriftList;
};

/** A Parquet file's footer (FileMetaData) and where its column chunk bytes lie. */
interface ParsedFile {
  readonly bytes: Uint8Array;
  readonly meta: ThriftStruct;
  readonly rowGroups: ThriftStruct[];
  /** Byte range of all column chunks (row groups are written back to back from `start`). */
  readonly start: number;
  readonly end: number;
}

function parse(bytes: Uint8Array): ParsedFile {
  const n = bytes.length;
  const magicAt = (at: number): boolean => MAGIC.every((m, i) => bytes[at + i] === m);
  if (n < 12 || !magicAt(0) || !magicAt(n - 4)) throw new Error('not a Parquet file');
  const footerLen = new DataView(bytes.buffer, bytes.byteOffset + n - 8, 4).getUint32(0, true);
  const footerAt = n - 8 - footerLen;
  if (footerAt < 4) throw new Error('parquet footer: bad length');
  const meta = new Reader(bytes.subarray(footerAt, n - 8)).struct();
  const rowGroups = listOf(meta, 4).items as ThriftStruct[];
  let start = Infinity;
  let end = 0;
  for (const rg of rowGroups) {
    for (const cc of listOf(rg, 1).items as ThriftStruct[]) {
      const md = cc.get(3)?.value as ThriftStruct | undefined;
      if (md === undefined || cc.has(1)) throw new Error('parquet footer: column chunk without metadata');
      const dict = i64(md, 11);
      const data = i64(md, 9)!;
      const first = Number(dict !== undefined && dict > 0n && dict < data ? dict : data);
      start = Math.min(start, first);
      end = Math.max(end, first + Number(i64(md, 7)!));
    }
  }
  if (rowGroups.length === 0) start = end = 4;
  return { bytes, meta, rowGroups, start, end };
}

/** Shifts every absolute offset of a row group by `delta` and drops its page index references. */
function shiftRowGroup(rg: ThriftStruct, delta: bigint, ordinal: number): void {
  const shift = (s: ThriftStruct, id: number): void => {
    const f = s.get(id);
    if (f !== undefined && (f.value as bigint) > 0n) f.value = (f.value as bigint) + delta;
  };
  shift(rg, 5); // file_offset
  if (rg.has(7)) rg.set(7, { type: T_I16, value: ordinal });
  for (const cc of listOf(rg, 1).items as ThriftStruct[]) {
    shift(cc, 2); // file_offset
    for (const id of [4, 5, 6, 7]) cc.delete(id); // offset/column index offset and length
    const md = cc.get(3)!.value as ThriftStruct;
    for (const id of [9, 10, 11]) shift(md, id); // data, index, dictionary page offsets
    md.delete(14); // bloom filter offset/length (parquet-wasm writes none)
    md.delete(15);
  }
}

/**
 * One Parquet file holding the row groups of `files` in order. The files must share one schema
 * (pieces of one table written with the same settings). A single file is returned as it is.
 */
export function concatParquet(files: readonly Uint8Array[]): Uint8Array[] {
  if (files.length === 1) return [files[0]!];
  const parsed = files.map(parse);
  const head = parsed[0]!;
  const out: Uint8Array[] = [Uint8Array.from(MAGIC)];
  let pos = 4;
  let rows = 0n;
  const rowGroups: ThriftStruct[] = [];
  for (const f of parsed) {
    const delta = BigInt(pos - f.start);
    for (const rg of f.rowGroups) {
      shiftRowGroup(rg, delta, rowGroups.length);
      rowGroups.push(rg);
    }
    rows += i64(f.meta, 3)!;
    out.push(f.bytes.subarray(f.start, f.end));
    pos += f.end - f.start;
  }
  const meta: ThriftStruct = new Map(head.meta);
  meta.set(3, { type: T_I64, value: rows });
  meta.set(4, { type: T_LIST, value: { kind: 'list', type: T_LIST, elem: T_STRUCT, items: rowGroups } });
  const w = new Writer();
  w.struct(meta);
  const footer = w.result();
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, footer.length, true);
  tail.set(MAGIC, 4);
  out.push(footer, tail);
  return out;
}
