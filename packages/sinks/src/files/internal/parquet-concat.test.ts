import { readParquet, ParquetFile } from 'parquet-wasm';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { createColumnBuilder } from '../dataset-columns.js';
import { encodeBatch } from './encode-worker.js';
import { concatParquet } from './parquet-concat.js';
import { bar, depth, level } from './test-records.js';

const T0 = Date.UTC(2026, 0, 5);
const join = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Kline pieces of `sizes` rows, row j of the whole table being bar j. */
function klinePieces(sizes: number[]): Uint8Array[] {
  const b = createColumnBuilder('kline');
  let j = 0;
  return sizes.map((n) => {
    for (const end = j + n; j < end; j++)
      // Nulls in some pieces only: the schema (nullable) is the same in every piece.
      b.append(bar(`C${j % 3}.US`, T0 + j * 60_000, { open: j, volume: j >= 150 && j % 5 === 0 ? null : j }));
    return encodeBatch(b.build(), 'parquet');
  });
}

describe('concatParquet', () => {
  it('joins pieces into one file with their rows in order, schema and nulls intact', async () => {
    const sizes = [100, 1, 250, 37];
    const joined = join(concatParquet(klinePieces(sizes)));
    const single = tableFromIPC(readParquet(klinePieces([388])[0]!).intoIPCStream());
    const t = tableFromIPC(readParquet(joined).intoIPCStream());
    expect(t.numRows).toBe(388);
    expect(String(t.schema)).toBe(String(single.schema));
    expect(t.toArray().map((r) => r.toJSON())).toEqual(single.toArray().map((r) => r.toJSON()));
    const meta = (await ParquetFile.fromFile(new Blob([joined]))).metadata();
    expect(meta.fileMetadata().numRows()).toBe(388);
    expect(meta.rowGroups().map((rg) => rg.numRows())).toEqual(sizes);
  });

  it('joins depth pieces (nested lists) and returns a single piece unchanged', () => {
    const b = createColumnBuilder('depth');
    const piece = (from: number, n: number): Uint8Array => {
      for (let j = from; j < from + n; j++)
        b.append(
          depth('AAPL.US', BigInt(j), T0 + j, j % 4 === 0 ? [] : [level(j, j % 2 ? 1 : undefined)], []),
        );
      return encodeBatch(b.build(), 'parquet');
    };
    const one = piece(0, 10);
    expect(concatParquet([one])).toEqual([one]);
    const t = tableFromIPC(
      readParquet(join(concatParquet([one, piece(10, 20), piece(30, 5)]))).intoIPCStream(),
    );
    expect(t.numRows).toBe(35);
    const rows = t.toArray().map((r) => r.toJSON());
    expect(rows.map((r) => r['seq'])).toEqual(Array.from({ length: 35 }, (_, j) => BigInt(j)));
    expect(rows.map((r) => JSON.stringify(r['bids']))).toEqual(
      Array.from({ length: 35 }, (_, j) =>
        JSON.stringify(j % 4 === 0 ? [] : [{ price: j, volume: j % 2 ? 1 : null }]),
      ),
    );
  });

  it('refuses bytes that are not a Parquet file', () => {
    const [a] = klinePieces([3]);
    expect(() => concatParquet([a!, a!.subarray(0, a!.length - 1)])).toThrow(/not a Parquet file/);
  });
});
