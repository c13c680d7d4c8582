import { zstdDecompressSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { createColumnBuilder } from '../dataset-columns.js';
import type { ColumnBatch, ColumnData, NumericColumn } from './column-data.js';
import { encodeBatch, encodeBatches } from './encode-worker.js';
import { concatParquet } from './parquet-concat.js';
import { DICT_LIMIT, NativeParquetWriter, isNativeParquetBatch } from './parquet-native.js';
import { bar, depth, level } from './test-records.js';

const T0 = Date.UTC(2026, 0, 5);
const join = (parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

type Row = Record<string, unknown>;

/** Rows as parquet-wasm (parquet-rs) reads them: timestamps as epoch ms, floats as numbers, nulls as null. */
function readWasm(bytes: Uint8Array): { schema: string; rows: Row[] } {
  const t = tableFromIPC(readParquet(bytes).intoIPCStream());
  const rows = t.toArray().map((r: { toJSON(): Row }) => {
    const o = r.toJSON();
    for (const k of Object.keys(o)) if (typeof o[k] === 'bigint') o[k] = Number(o[k]);
    return o;
  });
  return { schema: String(t.schema), rows };
}

const hyOpts = (bytes: Uint8Array) => ({
  file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  compressors: { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) },
});

/** Rows as hyparquet reads them, timestamps as epoch ms. */
async function readHy(bytes: Uint8Array): Promise<Row[]> {
  const rows = (await parquetReadObjects(hyOpts(bytes))) as Row[];
  return rows.map((r) => {
    const o: Row = {};
    for (const [k, v] of Object.entries(r))
      o[k] = v instanceof Date ? v.getTime() : typeof v === 'bigint' ? Number(v) : v;
    return o;
  });
}

/** The rows a batch holds, in the readers' normal form. */
function rowsOf(batch: ColumnBatch): Row[] {
  return Array.from({ length: batch.rows }, (_, i) => {
    const o: Row = {};
    for (const c of batch.columns) {
      if (c.kind === 'dict-utf8') o[c.name] = c.dict[c.indices[i]!];
      else if (c.kind === 'float64' || c.kind === 'timestamp-ms')
        o[c.name] = c.valid !== undefined && c.valid[i] === 0 ? null : c.values[i];
    }
    return o;
  });
}

const slice = (b: ColumnBatch, from: number, to: number): ColumnBatch => ({
  rows: to - from,
  columns: b.columns.map((c): ColumnData => {
    if (c.kind === 'dict-utf8') return { ...c, indices: c.indices.subarray(from, to) };
    if (c.kind === 'float64' || c.kind === 'timestamp-ms')
      return { ...c, values: c.values.subarray(from, to), valid: c.valid?.subarray(from, to) };
    return c;
  }),
});

function klineBatch(n: number, f: (j: number) => Parameters<typeof bar>[2] = () => ({})): ColumnBatch {
  const b = createColumnBuilder('kline');
  for (let j = 0; j < n; j++) b.append(bar(`C${j % 7}.US`, T0 + j * 60_000, f(j)));
  return b.build();
}

describe('NativeParquetWriter', () => {
  it('handles flat kline batches only (depth lists and suspension utf8 columns go to parquet-wasm)', () => {
    expect(isNativeParquetBatch(klineBatch(3))).toBe(true);
    const d = createColumnBuilder('depth');
    d.append(depth('X', 1n, T0, [level(1, 2)], []));
    expect(isNativeParquetBatch(d.build())).toBe(false);
  });

  it('writes the schema, values and nulls parquet-wasm writes, read back by parquet-rs and hyparquet', async () => {
    const batch = klineBatch(1000, (j) => ({
      open: j / 8,
      volume: j % 9 === 0 ? null : j,
      turnover: j % 4 === 1 ? null : j * 1.5,
    }));
    const native = encodeBatch(batch, 'parquet', 'native');
    const wasm = encodeBatch(batch, 'parquet', 'wasm');
    const a = readWasm(native);
    const b = readWasm(wasm);
    expect(a.schema).toBe(b.schema);
    expect(a.schema).toContain('ts: Timestamp<MILLISECOND, UTC>');
    expect(a.rows).toEqual(b.rows);
    expect(a.rows).toEqual(rowsOf(batch));
    expect(await readHy(native)).toEqual(rowsOf(batch));
  });

  it('writes the encodings and the statistics readers prune by', () => {
    const batch = klineBatch(5000, (j) => ({
      high: 1000 + (j % 50),
      volume: j === 7 ? null : j % 3,
      turnover: j * 1.25 + 0.001 * j, // high cardinality: PLAIN
    }));
    const meta = parquetMetadata(hyOpts(encodeBatch(batch, 'parquet', 'native')).file);
    expect(Number(meta.num_rows)).toBe(5000);
    const cols = Object.fromEntries(
      meta.row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema[0], c.meta_data!]),
    );
    expect(cols['code']!.encodings).toEqual(expect.arrayContaining(['RLE_DICTIONARY']));
    expect(cols['ts']!.encodings).toContain('DELTA_BINARY_PACKED');
    expect(cols['high']!.encodings).toContain('RLE_DICTIONARY');
    expect(cols['turnover']!.encodings).not.toContain('RLE_DICTIONARY');
    expect(cols['code']!.statistics).toMatchObject({
      min_value: 'C0.US',
      max_value: 'C6.US',
      null_count: 0n,
    });
    const ts = cols['ts']!.statistics!;
    expect([ts.min_value, ts.max_value].map((d) => (d instanceof Date ? d.getTime() : Number(d)))).toEqual([
      T0,
      T0 + 4999 * 60_000,
    ]);
    expect(cols['high']!.statistics).toMatchObject({ min_value: 1000, max_value: 1049, null_count: 0n });
    expect(cols['volume']!.statistics).toMatchObject({ min_value: -0, max_value: 2, null_count: 1n });
    expect(meta.key_value_metadata?.map((kv) => kv.key)).toEqual(['ARROW:schema']);
  });

  it('keeps the rows of many pages and row groups in order, as one file or pieces joined', async () => {
    const batch = klineBatch(2500, (j) => ({ close: (j * 7919) % 1013, volume: j % 11 ? j : null }));
    const w = new NativeParquetWriter({ pageRows: 300, rowGroupRows: 1000 });
    for (const [from, to] of [
      [0, 1],
      [1, 700],
      [700, 1000],
      [1000, 2500],
    ] as const)
      w.push(slice(batch, from, to));
    const file = join(w.finish());
    const meta = parquetMetadata(hyOpts(file).file);
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([1000, 1500]);
    expect(readWasm(file).rows).toEqual(rowsOf(batch));
    expect(await readHy(file)).toEqual(rowsOf(batch));
    const joined = join(
      concatParquet(
        [slice(batch, 0, 1200), slice(batch, 1200, 2500)].map((b) => encodeBatch(b, 'parquet', 'native')),
      ),
    );
    expect(readWasm(joined).rows).toEqual(rowsOf(batch));
  });

  it('switches a float column to PLAIN once its dictionary is full, mid row group', async () => {
    const n = 20_000 + DICT_LIMIT;
    const batch = klineBatch(n, (j) => ({ open: j < 20_000 ? j % 10 : j + 0.5 }));
    const w = new NativeParquetWriter({ pageRows: 20_000 });
    w.push(batch);
    const file = join(w.finish());
    const open = parquetMetadata(hyOpts(file).file).row_groups[0]!.columns[2]!.meta_data!;
    expect(open.encodings).toEqual(expect.arrayContaining(['RLE_DICTIONARY', 'PLAIN']));
    const back = tableFromIPC(readParquet(file).intoIPCStream()).getChild('open')!.toArray() as Float64Array;
    expect(back).toEqual((batch.columns[2] as NumericColumn).values);
  });

  it('round-trips any kline rows exactly: NaN, -0, infinities, nulls, negative and far timestamps, any split', async () => {
    const value = fc.oneof(
      fc.double(),
      fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e308, 5e-324),
      fc.integer({ min: -3, max: 3 }),
    );
    const row = fc.record({
      code: fc.constantFrom('A', 'BB.US', 'Ünïcode', '𝔘.HK', ''),
      tsMs: fc.integer({ min: -8_640_000_000_000, max: 8_640_000_000_000 }),
      open: value,
      volume: fc.option(value, { nil: null }),
      turnover: fc.option(value, { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 300 }), fc.nat(), async (rows, cut) => {
        const b = createColumnBuilder('kline');
        for (const r of rows)
          b.append(bar(r.code, r.tsMs, { open: r.open, volume: r.volume, turnover: r.turnover }));
        const batch = b.build();
        const at = cut % (batch.rows + 1);
        const bytes = encodeBatches(
          [slice(batch, 0, at), slice(batch, at, batch.rows)].filter((x) => x.rows > 0),
          'parquet',
          'native',
        );
        const same = (x: unknown, y: unknown): boolean => Object.is(x, y);
        const want = rowsOf(batch);
        const got = readWasm(bytes).rows;
        expect(got.length).toBe(want.length);
        for (let i = 0; i < want.length; i++)
          for (const k of Object.keys(want[i]!))
            if (!same(got[i]![k], want[i]![k])) expect([i, k, got[i]![k]]).toEqual([i, k, want[i]![k]]);
      }),
      { numRuns: 60 },
    );
  });
});
