/**
 * THE mapping from core's domain records to the dataset columns of `shared/spec/contract.md`
 * ("Datasets on disk"): which dataset a record belongs to, which Hive partition directory, and
 * how its fields become columns. Every file format (Parquet, Arrow IPC, NDJSON) goes through it.
 */
import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';
import type { ColumnBatch, ColumnData } from './internal/column-data.js';

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
  'utf8' | 'int64' | 'float64' | 'timestamp[ms, UTC]' | 'list<struct<price float64, volume float64?>>';

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
  ],
  depth: [
    col('code', 'utf8'),
    col('seq', 'int64', true),
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

/** Accumulates the rows of one file, column by column. */
export interface ColumnBuilder {
  /** Rows appended so far. */
  readonly rows: number;
  /** In-memory (uncompressed) size estimate of the rows so far, bytes. */
  readonly estimatedBytes: number;
  append(record: DatasetRecord): void;
  /** The batch, after which the builder is empty again. */
  build(): ColumnBatch;
}

/** A fresh builder for one dataset kind. */
export function createColumnBuilder(kind: DatasetKind): ColumnBuilder {
  switch (kind) {
    case 'kline':
      return new KlineBuilder();
    case 'depth':
      return new DepthBuilder();
    case 'suspension':
      return new SuspensionBuilder();
  }
}

/** Interns strings to dictionary indices (product codes repeat on almost every row). */
class Dict {
  values: string[] = [];
  private index = new Map<string, number>();
  bytes = 0;
  id(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(s);
      this.index.set(s, i);
      this.bytes += s.length;
    }
    return i;
  }
}

const numeric = (
  kind: 'float64' | 'timestamp-ms',
  name: string,
  values: number[],
  valid: number[] | undefined,
): ColumnData => ({
  kind,
  name,
  nullable: valid !== undefined,
  values: Float64Array.from(values),
  // Omitted when nothing is null: the encoder then writes no validity bitmap at all.
  valid: valid === undefined || !valid.includes(0) ? undefined : Uint8Array.from(valid),
});

class KlineBuilder implements ColumnBuilder {
  private dict = new Dict();
  private code: number[] = [];
  private ts: number[] = [];
  private open: number[] = [];
  private high: number[] = [];
  private low: number[] = [];
  private close: number[] = [];
  private volume: number[] = [];
  private volumeValid: number[] = [];
  private turnover: number[] = [];
  private turnoverValid: number[] = [];
  get rows(): number {
    return this.code.length;
  }
  get estimatedBytes(): number {
    return this.code.length * 60 + this.dict.bytes;
  }
  append(r: DatasetRecord): void {
    if (r.type !== 'bar' && r.type !== 'bar-update')
      throw new TypeError(`kline builder got a ${r.type} record`);
    this.code.push(this.dict.id(r.code));
    this.ts.push(r.tsMs);
    this.open.push(r.open);
    this.high.push(r.high);
    this.low.push(r.low);
    this.close.push(r.close);
    // core turns the provider's empty-string volume/turnover into null (provider-facts.md).
    this.volume.push(r.volume ?? 0);
    this.volumeValid.push(r.volume === null ? 0 : 1);
    this.turnover.push(r.turnover ?? 0);
    this.turnoverValid.push(r.turnover === null ? 0 : 1);
  }
  build(): ColumnBatch {
    const batch: ColumnBatch = {
      rows: this.rows,
      columns: [
        { kind: 'dict-utf8', name: 'code', dict: this.dict.values, indices: Int32Array.from(this.code) },
        numeric('timestamp-ms', 'ts', this.ts, undefined),
        numeric('float64', 'open', this.open, undefined),
        numeric('float64', 'high', this.high, undefined),
        numeric('float64', 'low', this.low, undefined),
        numeric('float64', 'close', this.close, undefined),
        numeric('float64', 'volume', this.volume, this.volumeValid),
        numeric('float64', 'turnover', this.turnover, this.turnoverValid),
      ],
    };
    Object.assign(this, new KlineBuilder());
    return batch;
  }
}

class LevelsBuilder {
  offsets: number[] = [0];
  price: number[] = [];
  volume: number[] = [];
  volumeValid: number[] = [];
  append(levels: DepthTick['bids']): void {
    for (const l of levels) {
      this.price.push(l.price);
      this.volume.push(l.volume ?? 0);
      this.volumeValid.push(l.volume === undefined ? 0 : 1);
    }
    this.offsets.push(this.price.length);
  }
  build(name: string): ColumnData {
    return {
      kind: 'levels',
      name,
      offsets: Int32Array.from(this.offsets),
      price: Float64Array.from(this.price),
      volume: Float64Array.from(this.volume),
      volumeValid: Uint8Array.from(this.volumeValid),
    };
  }
}

class DepthBuilder implements ColumnBuilder {
  private dict = new Dict();
  private code: number[] = [];
  private seq: bigint[] = [];
  private seqValid: number[] = [];
  private tickTime: number[] = [];
  private tickTimeValid: number[] = [];
  private bids = new LevelsBuilder();
  private asks = new LevelsBuilder();
  get rows(): number {
    return this.code.length;
  }
  get estimatedBytes(): number {
    return this.code.length * 30 + (this.bids.price.length + this.asks.price.length) * 17 + this.dict.bytes;
  }
  append(r: DatasetRecord): void {
    if (r.type !== 'depth') throw new TypeError(`depth builder got a ${r.type} record`);
    this.code.push(this.dict.id(r.code));
    this.seq.push(r.seq ?? 0n);
    this.seqValid.push(r.seq === undefined ? 0 : 1);
    this.tickTime.push(r.tickTimeMs ?? 0);
    this.tickTimeValid.push(r.tickTimeMs === undefined ? 0 : 1);
    this.bids.append(r.bids);
    this.asks.append(r.asks);
  }
  build(): ColumnBatch {
    const batch: ColumnBatch = {
      rows: this.rows,
      columns: [
        { kind: 'dict-utf8', name: 'code', dict: this.dict.values, indices: Int32Array.from(this.code) },
        {
          kind: 'int64',
          name: 'seq',
          nullable: true,
          values: BigInt64Array.from(this.seq),
          valid: this.seqValid.includes(0) ? Uint8Array.from(this.seqValid) : undefined,
        },
        numeric('timestamp-ms', 'tick_time', this.tickTime, this.tickTimeValid),
        this.bids.build('bids'),
        this.asks.build('asks'),
      ],
    };
    Object.assign(this, new DepthBuilder());
    return batch;
  }
}

class SuspensionBuilder implements ColumnBuilder {
  private records: SuspensionRecord[] = [];
  private bytes = 0;
  get rows(): number {
    return this.records.length;
  }
  get estimatedBytes(): number {
    return this.bytes;
  }
  append(r: DatasetRecord): void {
    if (r.type !== 'suspension') throw new TypeError(`suspension builder got a ${r.type} record`);
    this.records.push(r);
    this.bytes += 64;
    for (const [field] of SUSPENSION_RAW_COLUMNS) this.bytes += 2 * (r[field]?.length ?? 0);
  }
  build(): ColumnBatch {
    const rs = this.records;
    const utf8 = (name: string, nullable: boolean, values: (string | undefined)[]): ColumnData => ({
      kind: 'utf8',
      name,
      nullable,
      values: values.map((v) => v ?? null),
    });
    const times = (name: string, values: (number | undefined)[], nullable: boolean): ColumnData =>
      numeric(
        'timestamp-ms',
        name,
        values.map((v) => v ?? 0),
        nullable ? values.map((v) => (v === undefined ? 0 : 1)) : undefined,
      );
    const batch: ColumnBatch = {
      rows: rs.length,
      columns: [
        utf8(
          'symbol',
          false,
          rs.map((r) => r.symbol),
        ),
        utf8(
          'symbol_name',
          true,
          rs.map((r) => r.symbolName),
        ),
        times(
          'halt_at',
          rs.map((r) => r.haltAtMs),
          true,
        ),
        times(
          'resume_at',
          rs.map((r) => r.resumeAtMs),
          true,
        ),
        times(
          'publish_date',
          rs.map((r) => r.publishAtMs),
          false,
        ),
        utf8(
          'halt_reason',
          true,
          rs.map((r) => r.haltReason),
        ),
        ...SUSPENSION_RAW_COLUMNS.map(([field, name]) =>
          utf8(
            name,
            field !== 'symbol' && field !== 'publishDate',
            rs.map((r) => r[field]),
          ),
        ),
      ],
    };
    this.records = [];
    this.bytes = 0;
    return batch;
  }
}
