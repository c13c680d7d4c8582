import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects, readOffsetIndex, type FileMetaData } from 'hyparquet';
import type { Bar, DepthTick } from '@quoteflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetKind } from '../dataset-columns.js';
import { createColumnBuilder } from './column-builders.js';
import type { ColumnBatch } from './column-data.js';
import { EncodeSession, encodeBatches, type ParquetLayout } from './encode-worker.js';
import { bar, depth, level } from '../../../test-support/test-records.js';

// hyparquet is the oracle: an independent Parquet reader (pure JavaScript, no parquet-rs code),
// given zstd from node:zlib and timestamps as plain epoch-ms numbers.
async function readBack(bytes: Uint8Array): Promise<{ rows: Record<string, unknown>[]; meta: FileMetaData }> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = await parquetReadObjects({
    file,
    compressors: { ZSTD: (input) => new Uint8Array(zstdDecompressSync(input)) },
    parsers: { timestampFromMilliseconds: (ms: bigint) => Number(ms) },
  });
  return { rows, meta: parquetMetadata(file) };
}

/** Data pages per column chunk, from the offset index parquet-rs writes. */
function pagesPerChunk(bytes: Uint8Array, meta: FileMetaData): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return meta.row_groups.flatMap((rg) =>
    rg.columns.map((c) =>
      c.offset_index_offset === undefined
        ? 0
        : readOffsetIndex({ view, offset: Number(c.offset_index_offset) }).page_locations.length,
    ),
  );
}

// Epoch ms across JavaScript's whole Date range (±8.64e15, below 2^53), with the values that broke
// the deleted writer's delta packing (|v| near 4e15 and 2^52) drawn often.
const EDGE_MS = [
  4e15,
  -4e15,
  4e15 + 1,
  -4e15 - 1,
  2 ** 52,
  -(2 ** 52),
  2 ** 52 + 1,
  8.64e15,
  -8.64e15,
  0,
  -1,
];
const arbMs = fc.oneof(
  fc.constantFrom(...EDGE_MS),
  fc.bigInt({ min: -8_640_000_000_000_000n, max: 8_640_000_000_000_000n }).map(Number),
  fc.integer({ min: -1000, max: 1000 }).map((d) => 4e15 + d),
  fc.integer({ min: -1000, max: 1000 }).map((d) => -4e15 + d),
);
// Every double, NaN, ±Infinity and -0 included: Parquet DOUBLE holds each bit for bit.
const arbFloat = fc.double();
const arbBar = fc
  .record({
    code: fc.constantFrom('AAPL.US', '700.HK', '浦发银行.SH', 'BTCUSDT', ''),
    tsMs: arbMs,
    open: arbFloat,
    high: arbFloat,
    low: arbFloat,
    close: arbFloat,
    volume: fc.option(arbFloat, { nil: null }),
    turnover: fc.option(arbFloat, { nil: null }),
    readAtMs: arbMs,
  })
  .map((r): Bar => bar(r.code, r.tsMs, r));
const arbLevels = fc.array(
  fc
    .record({ price: arbFloat, volume: fc.option(arbFloat, { nil: undefined }) })
    .map((l) => level(l.price, l.volume)),
  { maxLength: 4 },
);
const arbTick = fc
  .record({
    code: fc.constantFrom('AAPL.US', 'US500', 'BTCUSDT'),
    seq: fc.option(
      fc.oneof(
        fc.constantFrom(0n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      ),
      { nil: undefined },
    ),
    tickTimeMs: fc.option(arbMs, { nil: undefined }),
    bids: arbLevels,
    asks: arbLevels,
  })
  .map((t): DepthTick => depth(t.code, t.seq, t.tickTimeMs, t.bids, t.asks));

// Tiny pages (a page closes after every `writeBatchRows` rows), small row groups and a dictionary
// that overflows to PLAIN early or never, so a few hundred rows cross many boundaries.
const arbLayout: fc.Arbitrary<ParquetLayout> = fc.record({
  maxRowGroupRows: fc.integer({ min: 1, max: 60 }),
  dataPageBytes: fc.constantFrom(1, 64),
  dictionaryPageBytes: fc.constantFrom(16, 1 << 20),
  writeBatchRows: fc.integer({ min: 1, max: 9 }),
});

/** The rows a reader must see: epoch ms as numbers, null for absent values, seq as bigint. */
function expectedRows(kind: DatasetKind, records: readonly (Bar | DepthTick)[]): Record<string, unknown>[] {
  return records.map((r) =>
    kind === 'kline'
      ? (({ code, tsMs, open, high, low, close, volume, turnover, readAtMs }: Bar) => ({
          code,
          ts: tsMs,
          open,
          high,
          low,
          close,
          volume,
          turnover,
          read_at: readAtMs,
        }))(r as Bar)
      : (({ code, seq, tickTimeMs, bids, asks }: DepthTick) => ({
          code,
          seq: seq ?? null,
          tick_time: tickTimeMs ?? null,
          bids: bids.map((l) => ({ price: l.price, volume: l.volume ?? null })),
          asks: asks.map((l) => ({ price: l.price, volume: l.volume ?? null })),
        }))(r as DepthTick),
  );
}

/** Splits records into batches the way the writer hands a file's rows over, in pieces. */
function batchesOf(kind: DatasetKind, records: readonly (Bar | DepthTick)[], cuts: number[]): ColumnBatch[] {
  const out: ColumnBatch[] = [];
  let from = 0;
  for (const to of [...cuts.map((c) => Math.min(c, records.length)).sort((a, b) => a - b), records.length]) {
    if (to <= from) continue;
    const b = createColumnBuilder(kind);
    for (const r of records.slice(from, to)) b.append(r);
    out.push(b.build());
    from = to;
  }
  return out;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-encode-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let fileNo = 0;
/** Encodes through the streaming writer (what DatasetWriter uses) or in one go, into bytes. */
async function encode(batches: ColumnBatch[], layout: ParquetLayout, streamed: boolean): Promise<Uint8Array> {
  if (!streamed) return encodeBatches(batches, 'parquet', layout);
  const session = new EncodeSession('parquet', layout);
  for (const b of batches) session.push(b);
  const path = join(dir, `f${++fileNo}.parquet`);
  await session.end(join(dir, `f${fileNo}.tmp`), path);
  return new Uint8Array(await readFile(path));
}

describe('Parquet files from parquet-wasm, read back by an independent reader', () => {
  it.each(['kline', 'depth'] as const)(
    'hold every %s value exactly (timestamps near ±4e15 ms, uint64 seq, every double) across pages and row groups',
    async (kind) => {
      const arbRecords: fc.Arbitrary<(Bar | DepthTick)[]> =
        kind === 'kline'
          ? fc.array(arbBar, { minLength: 1, maxLength: 300 })
          : fc.array(arbTick, { minLength: 1, maxLength: 120 });
      await fc.assert(
        fc.asyncProperty(
          arbRecords,
          arbLayout,
          fc.array(fc.nat(300), { maxLength: 3 }),
          fc.boolean(),
          async (records, layout, cuts, streamed) => {
            const bytes = await encode(batchesOf(kind, records, cuts), layout, streamed);
            const { rows, meta } = await readBack(bytes);
            // toStrictEqual compares with Object.is: NaN equals NaN, -0 differs from 0.
            expect(rows).toStrictEqual(expectedRows(kind, records));
            expect(meta.row_groups.length).toBe(Math.ceil(records.length / layout.maxRowGroupRows));
          },
        ),
        { numRuns: 60 },
      );
    },
    120_000,
  );

  it('cut 2,000 kline rows into several row groups of several pages each, dictionary then PLAIN', async () => {
    const records = Array.from({ length: 2000 }, (_, i) =>
      bar(`C${i % 7}`, 4e15 + i * 60_000, { open: i / 8, turnover: i * 1.000001, readAtMs: -4e15 - i }),
    );
    const layout = { maxRowGroupRows: 700, dataPageBytes: 64, dictionaryPageBytes: 512, writeBatchRows: 50 };
    const bytes = await encode(batchesOf('kline', records, [333, 1500]), layout, true);
    const { rows, meta } = await readBack(bytes);
    expect(rows).toStrictEqual(expectedRows('kline', records));
    expect(meta.row_groups.map((rg) => Number(rg.num_rows))).toEqual([700, 700, 600]);
    // Columns whose values vary (ts, open, turnover, read_at) hold many pages in every row group;
    // constant ones (high, low, ...) encode to a few bytes a page and need few.
    const pages = pagesPerChunk(bytes, meta);
    for (let rg = 0; rg < 3; rg++)
      for (const col of [1, 2, 7, 8]) expect(pages[rg * 9 + col]).toBeGreaterThanOrEqual(10);
    const encodings = new Set(meta.row_groups.flatMap((rg) => rg.columns[7]!.meta_data!.encodings));
    expect([...encodings]).toEqual(expect.arrayContaining(['PLAIN', 'RLE_DICTIONARY']));
  });

  it('declare the contract types: timestamp(ms, UTC), float64, utf8, uint64 seq, nullable where the contract says', async () => {
    const kline = await readBack(encodeBatches(batchesOf('kline', [bar('A', 0)], []), 'parquet'));
    const depthFile = await readBack(
      encodeBatches(batchesOf('depth', [depth('A', 1n, 0, [level(1, 1)], [])], []), 'parquet'),
    );
    const leaf = (meta: FileMetaData): [string, string, unknown, string | undefined][] =>
      meta.schema
        .filter((e) => e.type !== undefined)
        .map((e) => [e.name, e.type!, e.logical_type ?? e.converted_type, e.repetition_type]);
    const ts = { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' };
    expect(leaf(kline.meta)).toEqual([
      ['code', 'BYTE_ARRAY', { type: 'STRING' }, 'REQUIRED'],
      ['ts', 'INT64', ts, 'REQUIRED'],
      ['open', 'DOUBLE', undefined, 'REQUIRED'],
      ['high', 'DOUBLE', undefined, 'REQUIRED'],
      ['low', 'DOUBLE', undefined, 'REQUIRED'],
      ['close', 'DOUBLE', undefined, 'REQUIRED'],
      ['volume', 'DOUBLE', undefined, 'OPTIONAL'],
      ['turnover', 'DOUBLE', undefined, 'OPTIONAL'],
      ['read_at', 'INT64', ts, 'REQUIRED'],
    ]);
    expect(leaf(depthFile.meta)).toEqual([
      ['code', 'BYTE_ARRAY', { type: 'STRING' }, 'REQUIRED'],
      ['seq', 'INT64', { type: 'INTEGER', bitWidth: 64, isSigned: false }, 'OPTIONAL'],
      ['tick_time', 'INT64', ts, 'OPTIONAL'],
      ['price', 'DOUBLE', undefined, 'REQUIRED'],
      ['volume', 'DOUBLE', undefined, 'OPTIONAL'],
      ['price', 'DOUBLE', undefined, 'REQUIRED'],
      ['volume', 'DOUBLE', undefined, 'OPTIONAL'],
    ]);
  });
});
