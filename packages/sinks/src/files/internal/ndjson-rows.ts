/**
 * NDJSON rows of a column batch, written by hand rather than by `JSON.stringify`, which prints a
 * whole float as an integer (`18`) and has no bigint.
 *
 * Loaded by the encoder worker too: erasable TypeScript only, relative imports of types only.
 */
import type { ColumnBatch, ColumnData } from './column-data.js';

/**
 * A float64 as a JSON number that every reader infers as a float: whole values keep a fraction
 * (`18.0`, not `18`), or a reader that guesses a file's types from its first rows (Polars'
 * `scan_ndjson`) makes the column Int64 and then fails on the next file's `18.87977`. Non-finite
 * values have no JSON number: null, as `JSON.stringify` writes them.
 */
export function jsonFloat(v: number): string {
  if (!Number.isFinite(v)) return 'null';
  const s = String(v);
  // String() of a whole value below 1e21 has neither '.' nor an exponent; -0 prints as "0".
  if (Number.isInteger(v) && !s.includes('e')) return Object.is(v, -0) ? '-0.0' : `${s}.0`;
  return s;
}

function jsonLevels(c: Extract<ColumnData, { kind: 'levels' }>, row: number): string {
  let out = '[';
  for (let j = c.offsets[row]!; j < c.offsets[row + 1]!; j++) {
    if (j > c.offsets[row]!) out += ',';
    out += `{"price":${jsonFloat(c.price[j]!)},"volume":${c.volumeValid[j] === 1 ? jsonFloat(c.volume[j]!) : 'null'}}`;
  }
  return out + ']';
}

/** One JSON value of column `c` at `row`, written by hand so floats stay floats ({@link jsonFloat}). */
function jsonValue(c: ColumnData, row: number): string {
  switch (c.kind) {
    case 'dict-utf8':
      return JSON.stringify(c.dict[c.indices[row]!]);
    case 'utf8':
      return JSON.stringify(c.values[row]);
    case 'levels':
      return jsonLevels(c, row);
    default:
      if (c.valid !== undefined && c.valid[row] !== 1) return 'null';
      // Times as ISO-8601 UTC and seq as a decimal string, as Kafka values carry them
      // (contract.md): exact digits for every reader (a JSON number past 2^53 or 2^63 is rounded
      // or refused by some), and castable to UBIGINT / UInt64.
      if (c.kind === 'timestamp-ms') return `"${new Date(c.values[row] as number).toISOString()}"`;
      if (c.kind === 'uint64') return `"${String(c.values[row])}"`;
      return jsonFloat(c.values[row] as number);
  }
}

/** The batch as NDJSON: one object per row, the columns in order. */
export function ndjsonRows(batch: ColumnBatch): string {
  const keys = batch.columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  let out = '';
  for (let i = 0; i < batch.rows; i++) {
    for (let k = 0; k < batch.columns.length; k++) out += keys[k]! + jsonValue(batch.columns[k]!, i);
    out += '}\n';
  }
  return out;
}
