import { randomUUID } from 'node:crypto';
import { DATASET_COLUMNS, type DatasetColumnType, type DatasetKind } from '../dataset-columns.js';
import { FileSinkError } from '../file-sink-error.js';
import { withFormatVersion } from './table-format.js';

/**
 * The Delta Lake actions quoteflow writes (PROTOCOL.md of delta-io/delta), reduced to what it
 * honours: reader version 1 (no reader features), writer version 7 with the two writer features
 * it implements: `domainMetadata` (per-series watermarks and non-Parquet files ride there) and
 * `invariants` (the schema's non-nullable columns, which Delta counts as invariants: quoteflow's
 * files hold them as required columns, so no null can be written there).
 */
export const DELTA_PROTOCOL = {
  minReaderVersion: 1,
  minWriterVersion: 7,
  writerFeatures: ['domainMetadata', 'invariants'],
} as const;

/**
 * Domains quoteflow keeps in `domainMetadata`: one per series (its watermark), one per non-Parquet
 * file, one per claimed series (its owner: `{"writer": id}`), one per writer with claims (host,
 * pid, lease, renewals: a `TableWriter`).
 */
export const SERIES_DOMAIN = 'quoteflow.series.';
export const FILE_DOMAIN = 'quoteflow.file.';
export const OWNER_DOMAIN = 'quoteflow.owner.';
export const WRITER_DOMAIN = 'quoteflow.writer.';

/** Per-file statistics as Delta's `add.stats` holds them (a JSON string there). */
export interface DeltaStats {
  readonly numRecords: number;
  readonly minValues: Record<string, string | number>;
  readonly maxValues: Record<string, string | number>;
  readonly nullCount: Record<string, number>;
}

export interface DeltaAdd {
  readonly path: string;
  readonly partitionValues: Record<string, string | null>;
  readonly size: number;
  readonly modificationTime: number;
  readonly dataChange: boolean;
  readonly stats?: string;
}

export interface DeltaRemove {
  readonly path: string;
  readonly deletionTimestamp: number;
  readonly dataChange: boolean;
  readonly extendedFileMetadata: boolean;
  readonly partitionValues: Record<string, string | null>;
  readonly size: number;
}

export interface DeltaDomainMetadata {
  readonly domain: string;
  readonly configuration: string;
  readonly removed: boolean;
}

export interface DeltaMetaData {
  readonly id: string;
  readonly format: { readonly provider: 'parquet'; readonly options: Record<string, string> };
  readonly schemaString: string;
  readonly partitionColumns: readonly string[];
  readonly configuration: Record<string, string>;
  readonly createdTime: number;
}

/** One line of a commit file (`_delta_log/<version>.json`). */
export type DeltaAction =
  | { readonly commitInfo: Record<string, unknown> }
  | { readonly protocol: typeof DELTA_PROTOCOL }
  | { readonly metaData: DeltaMetaData }
  | { readonly add: DeltaAdd }
  | { readonly remove: DeltaRemove }
  | { readonly domainMetadata: DeltaDomainMetadata };

/** Partition columns' Delta types (values are the directory names' text). */
const PARTITION_TYPES: Record<string, string> = {
  kline_type: 'integer',
  year: 'integer',
  month: 'string',
  date: 'date',
  exchange: 'string',
};

const LEVEL_STRUCT = {
  type: 'struct',
  fields: [
    { name: 'price', type: 'double', nullable: false, metadata: {} },
    { name: 'volume', type: 'double', nullable: true, metadata: {} },
  ],
};

/**
 * Delta's type of a dataset column. The files hold timestamps in milliseconds (Parquet
 * `TIMESTAMP(MILLIS, UTC)`), which Delta readers widen to `timestamp` (microseconds, UTC) exactly.
 * `seq` (unsigned 64 bits in the files; Delta has no unsigned type) is `decimal(20,0)`, as Spark
 * reads Parquet's UINT_64: delta-rs and Spark read every value up to 2^64 - 1 exactly; Polars'
 * Delta reader refuses the column (it casts only to types it deems safe, and UInt64 is none).
 */
function deltaType(type: DatasetColumnType): unknown {
  switch (type) {
    case 'utf8':
      return 'string';
    case 'uint64':
      return 'decimal(20,0)';
    case 'float64':
      return 'double';
    case 'timestamp[ms, UTC]':
      return 'timestamp';
    case 'list<struct<price float64, volume float64?>>':
      return { type: 'array', elementType: LEVEL_STRUCT, containsNull: false };
  }
}

/** The table's schema in Delta's JSON schema format: the file columns, then the partition columns. */
export function deltaSchemaString(dataset: DatasetKind, partitionColumns: readonly string[]): string {
  const fields = DATASET_COLUMNS[dataset].map((c) => ({
    name: c.name,
    type: deltaType(c.type),
    nullable: c.nullable,
    metadata: {},
  }));
  for (const p of partitionColumns)
    fields.push({ name: p, type: PARTITION_TYPES[p] ?? 'string', nullable: true, metadata: {} });
  return JSON.stringify({ type: 'struct', fields });
}

export function newMetaData(
  dataset: DatasetKind,
  partitionColumns: readonly string[],
  nowMs: number,
): DeltaMetaData {
  return {
    id: randomUUID(),
    format: { provider: 'parquet', options: {} },
    schemaString: deltaSchemaString(dataset, partitionColumns),
    partitionColumns: [...partitionColumns],
    configuration: withFormatVersion({}),
    createdTime: nowMs,
  };
}

/** `meta` with another layout (the table's schema names its partition columns last). */
export function withPartitionColumns(
  meta: DeltaMetaData,
  dataset: DatasetKind,
  partitionColumns: readonly string[],
): DeltaMetaData {
  return {
    ...meta,
    schemaString: deltaSchemaString(dataset, partitionColumns),
    partitionColumns: [...partitionColumns],
  };
}

/**
 * A data file's partition values from its path relative to the table root
 * (`kline_type=1/month=2026-01/x.parquet` → `{kline_type: '1', month: '2026-01'}`), in order.
 */
export function partitionValuesOf(tablePath: string): [string, string][] {
  const parts = tablePath.split('/').slice(0, -1);
  return parts.map((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0)
      throw new FileSinkError(
        'QF_DATASET_LOG',
        `${tablePath} is not under Hive partition directories (key=value)`,
      );
    return [p.slice(0, eq), decodeURIComponent(p.slice(eq + 1))];
  });
}

/** A path relative to the table root as a Delta `path` (a relative URI: each segment percent-encoded, `=` kept). */
export function toDeltaPath(tablePath: string): string {
  return tablePath
    .split('/')
    .map((s) => encodeURIComponent(s).replaceAll('%3D', '='))
    .join('/');
}

export function fromDeltaPath(deltaPath: string): string {
  return deltaPath.split('/').map(decodeURIComponent).join('/');
}

/** Columns Delta statistics are kept for (top-level, comparable); `seq` and the level lists have none. */
function statColumns(dataset: DatasetKind): { name: string; kind: 'string' | 'number' | 'timestamp' }[] {
  const out: { name: string; kind: 'string' | 'number' | 'timestamp' }[] = [];
  for (const c of DATASET_COLUMNS[dataset]) {
    if (c.type === 'utf8') out.push({ name: c.name, kind: 'string' });
    else if (c.type === 'float64') out.push({ name: c.name, kind: 'number' });
    else if (c.type === 'timestamp[ms, UTC]') out.push({ name: c.name, kind: 'timestamp' });
  }
  return out;
}

/** Delta truncates string statistics; quoteflow keeps none for a value longer than this. */
const MAX_STRING_STAT = 32;

/**
 * Collects a file's statistics row by row: `row(column)` reads a column of the current row
 * (timestamps as epoch ms, missing values as null or undefined).
 */
export class StatsCollector {
  readonly #columns: ReturnType<typeof statColumns>;
  readonly #min = new Map<string, string | number>();
  readonly #max = new Map<string, string | number>();
  readonly #nulls = new Map<string, number>();
  /** Columns whose min/max cannot be stated (a value too long, or not finite). */
  readonly #unstated = new Set<string>();
  #rows = 0;
  /** The columns statistics are kept for. */
  readonly columns: readonly string[];

  constructor(dataset: DatasetKind) {
    this.#columns = statColumns(dataset);
    this.columns = this.#columns.map((c) => c.name);
    for (const c of this.#columns) this.#nulls.set(c.name, 0);
  }

  add(row: (column: string) => unknown): void {
    this.#rows++;
    for (const c of this.#columns) {
      const v = row(c.name);
      if (v === null || v === undefined) {
        this.#nulls.set(c.name, this.#nulls.get(c.name)! + 1);
        continue;
      }
      if (this.#unstated.has(c.name)) continue;
      const value = c.kind === 'string' ? String(v) : Number(v);
      if (typeof value === 'number' && !Number.isFinite(value)) {
        if (!Number.isNaN(value)) this.#unstated.add(c.name);
        continue;
      }
      if (typeof value === 'string' && value.length > MAX_STRING_STAT) {
        this.#unstated.add(c.name);
        continue;
      }
      const lo = this.#min.get(c.name);
      const hi = this.#max.get(c.name);
      if (lo === undefined || value < lo) this.#min.set(c.name, value);
      if (hi === undefined || value > hi) this.#max.set(c.name, value);
    }
  }

  stats(): DeltaStats {
    const minValues: Record<string, string | number> = {};
    const maxValues: Record<string, string | number> = {};
    const asStat = (name: string, v: string | number): string | number =>
      this.#columns.find((c) => c.name === name)?.kind === 'timestamp' ? new Date(v).toISOString() : v;
    for (const [name, v] of this.#min) if (!this.#unstated.has(name)) minValues[name] = asStat(name, v);
    for (const [name, v] of this.#max) if (!this.#unstated.has(name)) maxValues[name] = asStat(name, v);
    return { numRecords: this.#rows, minValues, maxValues, nullCount: Object.fromEntries(this.#nulls) };
  }
}
