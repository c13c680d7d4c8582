import type { DeltaStats } from '../delta/delta-actions.js';
import type { ColumnBatch, ColumnData } from './column-data.js';

/** Delta truncates string statistics; none is kept for a value longer than this (as `StatsCollector`). */
const MAX_STRING_STAT = 32;

type Kind = 'string' | 'number' | 'timestamp';

/** The statistics kind of a column: strings, doubles and timestamps have them; `seq` and book sides none. */
function kindOf(c: ColumnData): Kind | undefined {
  if (c.kind === 'dict-utf8' || c.kind === 'utf8') return 'string';
  if (c.kind === 'float64') return 'number';
  if (c.kind === 'timestamp-ms') return 'timestamp';
  return undefined;
}

/**
 * A file's Delta statistics gathered from its batches as they are encoded, column by column over
 * the typed arrays: the same figures `StatsCollector` gives row by row over the written file
 * (`readFileStats`), without reading the file back (a million-row file took two seconds of CPU to
 * read again). Nulls are counted; a NaN is neither a null nor a bound; an infinite value or a
 * string longer than 32 characters leaves its column without bounds.
 */
export class BatchStats {
  #rows = 0;
  readonly #kinds = new Map<string, Kind>();
  readonly #min = new Map<string, string | number>();
  readonly #max = new Map<string, string | number>();
  readonly #nulls = new Map<string, number>();
  readonly #unstated = new Set<string>();

  add(batch: ColumnBatch): void {
    this.#rows += batch.rows;
    for (const c of batch.columns) {
      const kind = kindOf(c);
      if (kind === undefined) continue;
      this.#kinds.set(c.name, kind);
      if (!this.#nulls.has(c.name)) this.#nulls.set(c.name, 0);
      if (c.kind === 'dict-utf8') {
        const used = new Uint8Array(c.dict.length);
        for (let i = 0; i < c.indices.length; i++) used[c.indices[i]!] = 1;
        for (let d = 0; d < c.dict.length; d++) if (used[d] === 1) this.#bound(c.name, c.dict[d]!);
      } else if (c.kind === 'utf8') {
        for (const v of c.values)
          if (v === null) this.#null(c.name);
          else this.#bound(c.name, v);
      } else if (c.kind === 'float64' || c.kind === 'timestamp-ms')
        this.#numbers(c.name, c.values as Float64Array, c.valid);
    }
  }

  stats(): DeltaStats {
    const minValues: Record<string, string | number> = {};
    const maxValues: Record<string, string | number> = {};
    const asStat = (name: string, v: string | number): string | number =>
      this.#kinds.get(name) === 'timestamp' ? new Date(v).toISOString() : v;
    for (const [name, v] of this.#min) if (!this.#unstated.has(name)) minValues[name] = asStat(name, v);
    for (const [name, v] of this.#max) if (!this.#unstated.has(name)) maxValues[name] = asStat(name, v);
    return { numRecords: this.#rows, minValues, maxValues, nullCount: Object.fromEntries(this.#nulls) };
  }

  /** A numeric column's bounds and nulls in one pass over its values, merged once. */
  #numbers(name: string, values: Float64Array, valid: Uint8Array | undefined): void {
    let lo = Infinity;
    let hi = -Infinity;
    let nulls = 0;
    let infinite = false;
    for (let i = 0; i < values.length; i++) {
      if (valid !== undefined && valid[i] === 0) {
        nulls++;
        continue;
      }
      const v = values[i]!;
      if (v === Infinity || v === -Infinity) infinite = true;
      else if (v === v) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    this.#nulls.set(name, this.#nulls.get(name)! + nulls);
    if (infinite) this.#unstated.add(name);
    if (lo <= hi) {
      this.#bound(name, lo);
      this.#bound(name, hi);
    }
  }

  #null(name: string): void {
    this.#nulls.set(name, this.#nulls.get(name)! + 1);
  }

  #bound(name: string, value: string | number): void {
    if (this.#unstated.has(name)) return;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      if (!Number.isNaN(value)) this.#unstated.add(name);
      return;
    }
    if (typeof value === 'string' && value.length > MAX_STRING_STAT) {
      this.#unstated.add(name);
      return;
    }
    const lo = this.#min.get(name);
    const hi = this.#max.get(name);
    if (lo === undefined || value < lo) this.#min.set(name, value);
    if (hi === undefined || value > hi) this.#max.set(name, value);
  }
}
