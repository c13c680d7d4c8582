/**
 * The columnar hand-over format between the record mapping (main thread) and the file encoder
 * (worker thread): plain typed arrays and small string arrays, so a batch crosses the thread
 * boundary by transfer instead of by cloning a million objects.
 */

/** A non-null utf8 column stored as a dictionary: distinct values plus one index per row. */
export interface DictUtf8Column {
  readonly kind: 'dict-utf8';
  readonly name: string;
  readonly dict: string[];
  readonly indices: Int32Array;
}

/** A utf8 column, `null` for absent values (small datasets only: suspensions). */
export interface Utf8Column {
  readonly kind: 'utf8';
  readonly name: string;
  readonly nullable: boolean;
  readonly values: (string | null)[];
}

/** A float64, timestamp(ms, UTC) or uint64 column; `valid[i] === 0` marks a null. */
export interface NumericColumn {
  readonly kind: 'float64' | 'timestamp-ms' | 'uint64';
  readonly name: string;
  readonly nullable: boolean;
  /** float64 and timestamp (epoch ms) values; uint64 values as BigUint64Array. */
  readonly values: Float64Array | BigUint64Array;
  /** One byte per row (1 = present); omitted when the column has no nulls. */
  readonly valid: Uint8Array | undefined;
}

/** An order book side: list<struct<price float64, volume float64?>>, non-null lists. */
export interface LevelsColumn {
  readonly kind: 'levels';
  readonly name: string;
  /** rows + 1 offsets into the level arrays. */
  readonly offsets: Int32Array;
  readonly price: Float64Array;
  readonly volume: Float64Array;
  readonly volumeValid: Uint8Array;
}

export type ColumnData = DictUtf8Column | Utf8Column | NumericColumn | LevelsColumn;

/** One file's worth of rows, column by column. */
export interface ColumnBatch {
  readonly rows: number;
  readonly columns: ColumnData[];
}

/** The buffers of a batch, for `postMessage` transfer lists. */
export function transferablesOf(batch: ColumnBatch): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  const add = (a: { buffer: ArrayBufferLike } | undefined): void => {
    if (a !== undefined && a.buffer instanceof ArrayBuffer && !out.includes(a.buffer)) out.push(a.buffer);
  };
  for (const c of batch.columns) {
    if (c.kind === 'dict-utf8') add(c.indices);
    else if (c.kind === 'levels') [c.offsets, c.price, c.volume, c.volumeValid].forEach(add);
    else if (c.kind !== 'utf8') [c.values, c.valid].forEach(add);
  }
  return out;
}
