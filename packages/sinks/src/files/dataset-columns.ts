/**
 * THE mapping from core's domain records to the dataset columns of `shared/spec/contract.md`
 * ("Datasets on disk"): which dataset a record belongs to, which Hive partition directory, and
 * which columns it has (`internal/column-builders.ts` fills them). Every file format (Parquet,
 * Arrow IPC, NDJSON) goes through it.
 */
import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';

/** The three datasets under `DIR`. */
export const DATASET_KINDS = ['kline', 'depth', 'suspension'] as const;
export type DatasetKind = (typeof DATASET_KINDS)[number];

/** What a dataset writer accepts. A `BarUpdate` is written only when `final` is true. */
export type DatasetRecord = Bar | BarUpdate | DepthTick | SuspensionRecord;

/** How kline files are sub-partitioned below `kline_type=K/`, by the bar start's UTC date. */
export const KLINE_SUB_PARTITIONS = ['month', 'year', 'date', 'none'] as const;
export type KlineSubPartition = (typeof KLINE_SUB_PARTITIONS)[number];

/** The column types a dataset uses (Arrow / Parquet logical types). */
export type DatasetColumnType =
  'utf8' | 'uint64' | 'float64' | 'timestamp[ms, UTC]' | 'list<struct<price float64, volume float64?>>';

/** One column of a dataset file (partition keys are directories, never columns). */
export interface DatasetColumn {
  readonly name: string;
  readonly type: DatasetColumnType;
  readonly nullable: boolean;
}

/**
 * The suspension record's raw wire fields, each kept as a utf8 column named `raw_` + the wire
 * name in snake_case (`haltDateTime` → `raw_halt_date_time`), so none clashes with a typed column.
 */
export const SUSPENSION_RAW_COLUMNS = [
  ['symbol', 'raw_symbol'],
  ['symbolName', 'raw_symbol_name'],
  ['haltReason', 'raw_halt_reason'],
  ['haltDate', 'raw_halt_date'],
  ['haltTime', 'raw_halt_time'],
  ['haltPeriod', 'raw_halt_period'],
  ['haltDateTime', 'raw_halt_date_time'],
  ['resumeDate', 'raw_resume_date'],
  ['resumeTime', 'raw_resume_time'],
  ['resumeDateTime', 'raw_resume_date_time'],
  ['sourceExchange', 'raw_source_exchange'],
  ['pauseThresholdPrice', 'raw_pause_threshold_price'],
  ['publishDate', 'raw_publish_date'],
] as const satisfies readonly (readonly [keyof SuspensionRecord, string])[];

const col = (name: string, type: DatasetColumnType, nullable = false): DatasetColumn => ({
  name,
  type,
  nullable,
});
const TS = 'timestamp[ms, UTC]';
const LEVELS = 'list<struct<price float64, volume float64?>>';

/** The columns of every dataset, in file order, exactly as the contract names and types them. */
export const DATASET_COLUMNS: Readonly<Record<DatasetKind, readonly DatasetColumn[]>> = {
  kline: [
    col('code', 'utf8'),
    col('ts', TS),
    col('open', 'float64'),
    col('high', 'float64'),
    col('low', 'float64'),
    col('close', 'float64'),
    col('volume', 'float64', true),
    col('turnover', 'float64', true),
    // When the request that returned the values was sent (core's `readAtMs`): the evidence that
    // the bar was read after it closed, checkable afterwards (contract.md, "Datasets on disk").
    col('read_at', TS),
  ],
  depth: [
    col('code', 'utf8'),
    // The service's range for seq is undocumented (provider-facts.md: "parse it as a 64-bit
    // integer"); its own fixtures reach 2^64 - 1, so unsigned 64 bits, and nothing outside.
    col('seq', 'uint64', true),
    col('tick_time', TS, true),
    col('bids', LEVELS),
    col('asks', LEVELS),
  ],
  suspension: [
    col('symbol', 'utf8'),
    col('symbol_name', 'utf8', true),
    col('halt_at', TS, true),
    col('resume_at', TS, true),
    col('publish_date', TS),
    col('halt_reason', 'utf8', true),
    ...SUSPENSION_RAW_COLUMNS.map(([field, name]) =>
      col(name, 'utf8', field !== 'symbol' && field !== 'publishDate'),
    ),
  ],
};

/** The dataset a record goes to, or `undefined` for records no file holds (a bar still forming). */
export function datasetKindOf(record: DatasetRecord): DatasetKind | undefined {
  switch (record.type) {
    case 'bar':
      return 'kline';
    case 'bar-update':
      return record.final ? 'kline' : undefined;
    case 'depth':
      return 'depth';
    case 'suspension':
      return 'suspension';
  }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/**
 * The partition directory of a record relative to `DIR`, Hive style:
 * `kline/kline_type=K/month=YYYY-MM` (sub-partition per `klineSubPartition`, by the bar start in
 * UTC), `depth/date=YYYY-MM-DD` (by tick time, else `nowMs`), `suspension/exchange=E`.
 */
export function datasetPartitionOf(
  record: DatasetRecord,
  klineSubPartition: KlineSubPartition,
  nowMs: number,
): string {
  switch (record.type) {
    case 'bar':
    case 'bar-update': {
      const base = `kline/kline_type=${record.klineType}`;
      if (klineSubPartition === 'none') return base;
      const d = new Date(record.tsMs);
      const y = pad(d.getUTCFullYear(), 4);
      if (klineSubPartition === 'year') return `${base}/year=${y}`;
      const m = `${y}-${pad(d.getUTCMonth() + 1)}`;
      return klineSubPartition === 'month'
        ? `${base}/month=${m}`
        : `${base}/date=${m}-${pad(d.getUTCDate())}`;
    }
    case 'depth': {
      const d = new Date(record.tickTimeMs ?? nowMs);
      return `depth/date=${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    }
    case 'suspension':
      return `suspension/exchange=${record.exchange}`;
  }
}

/** The UTC period `[fromMs, toMs)` a sub-partition value covers, and the value's directory. */
interface PeriodDir {
  readonly fromMs: number;
  readonly toMs: number;
  readonly dir: string;
}

/**
 * {@link datasetPartitionOf} with the last period remembered per series, so the hot path (a
 * million bars of one month) costs two comparisons instead of a `Date` and string formatting.
 */
export class DatasetPartitioner {
  /** Index 0: depth; 1–10: the kline types. */
  private readonly last: (PeriodDir | undefined)[] = [];
  constructor(private readonly klineSubPartition: KlineSubPartition) {}

  partitionOf(record: DatasetRecord, nowMs: number): string {
    let key: number;
    let tMs: number;
    if (record.type === 'bar' || record.type === 'bar-update') {
      key = record.klineType;
      tMs = record.tsMs;
    } else if (record.type === 'depth') {
      key = 0;
      tMs = record.tickTimeMs ?? nowMs;
    } else return datasetPartitionOf(record, this.klineSubPartition, nowMs);
    const hit = this.last[key];
    if (hit !== undefined && tMs >= hit.fromMs && tMs < hit.toMs) return hit.dir;
    const d = new Date(tMs);
    const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
    const unit = key === 0 ? 'date' : this.klineSubPartition;
    const [fromMs, toMs] =
      unit === 'none'
        ? [-Infinity, Infinity]
        : unit === 'year'
          ? [Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1)]
          : unit === 'month'
            ? [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)]
            : [Date.UTC(y, m, day), Date.UTC(y, m, day + 1)];
    const dir = datasetPartitionOf(record, this.klineSubPartition, nowMs);
    this.last[key] = { fromMs, toMs, dir };
    return dir;
  }
}
