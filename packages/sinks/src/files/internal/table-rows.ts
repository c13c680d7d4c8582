/**
 * Rows of a Parquet or Arrow IPC file through apache-arrow (parquet-wasm decodes Parquet into an
 * Arrow stream). Loaded on first use: both are optional peer dependencies of the package.
 */
import { DataType, tableFromIPC, TimeUnit, type Table } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';

/** The file's rows as an Arrow table; from Parquet, only the `projection` columns when given. */
export function readTable(bytes: Uint8Array, parquet: boolean, projection?: readonly string[]): Table {
  if (!parquet) return tableFromIPC(bytes);
  const columns = projection === undefined ? undefined : { columns: [...projection] };
  return tableFromIPC(readParquet(bytes, columns).intoIPCStream());
}

/**
 * Calls `onRow(value)` for every row of an Arrow table, in order, where `value(column)` reads a
 * column of that row (timestamps as epoch ms).
 */
export function forEachTableRow(table: Table, onRow: (value: (column: string) => unknown) => void): void {
  // Each column read whole, once, when a row first asks for it (Arrow's per-cell get() walks
  // the record batches), and the row count read once: Table.numRows sums every batch's length
  // on each call (1.4 M rows in ~700 batches: 10 s in the loop's condition alone).
  // toArray() of a numeric column is its values buffer, whatever a null slot holds there (the
  // writer leaves anything in it): a column with nulls is read through its iterator instead.
  const columns = new Map<string, ArrayLike<unknown> | undefined>();
  const column = (name: string) => {
    if (!columns.has(name)) {
      const vector = table.getChild(name);
      columns.set(
        name,
        vector === null
          ? undefined
          : vector.nullCount > 0
            ? [...vector]
            : DataType.isTimestamp(vector.type)
              ? timestampsInMs(vector.toArray() as ArrayLike<bigint | number>, vector.type.unit)
              : (vector.toArray() as ArrayLike<unknown>),
      );
    }
    return columns.get(name);
  };
  const rows = table.numRows;
  for (let i = 0; i < rows; i++) onRow((name) => column(name)?.[i]);
}

/**
 * A timestamp column's values buffer (in the column's unit: s, ms, us or ns, as whoever wrote the
 * file chose; DuckDB writes us) as epoch ms. Arrow's per-cell `get()` converts; `toArray()` does not.
 */
function timestampsInMs(values: ArrayLike<bigint | number>, unit: TimeUnit): number[] {
  const perMs = unit === TimeUnit.MICROSECOND ? 1_000 : unit === TimeUnit.NANOSECOND ? 1_000_000 : undefined;
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (unit === TimeUnit.SECOND) out[i] = Number(v) * 1_000;
    else if (perMs === undefined) out[i] = Number(v);
    else if (typeof v === 'number') out[i] = Math.floor(v / perMs);
    else {
      // Floor division, also before 1970.
      const d = BigInt(perMs);
      out[i] = Number((v - (((v % d) + d) % d)) / d);
    }
  }
  return out;
}
