// The options, defaults and formats of a DatasetWriter (dataset-writer.ts), and what it reports of a file.
import type { Clock } from '@quoteflow/core';
import type { DatasetKind, KlineSubPartition } from './dataset-columns.js';
import type { DeltaStats } from './delta/delta-actions.js';
import type { FileSinkError } from './file-sink-error.js';
import type { TableUpkeepOptions, UpkeepEvent } from './table-upkeep-options.js';
import type { TableWriterOptions } from './table-writer.js';

/**
 * File formats: Parquet (zstd, written by parquet-wasm from apache-arrow record batches), Arrow
 * IPC file (uncompressed, apache-arrow), NDJSON.
 */
export const DATASET_FORMATS = ['parquet', 'arrow', 'ndjson'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** Options of {@link DatasetWriter}. */
export interface DatasetWriterOptions extends TableWriterOptions {
  /**
   * The dataset root `DIR` (contract.md "Datasets on disk"), or `s3://bucket/prefix` (each file is
   * then built in a local scratch directory and uploaded). Each finished file is committed to its
   * table's Delta log as one version (with `publish: 'on-commit'` its committer does that instead).
   */
  readonly dir: string;
  /** @defaultValue `'parquet'` */
  readonly format?: DatasetFormat;
  /** A partition's file is finished once it holds this many rows. @defaultValue 1,000,000 rows */
  readonly maxRowsPerFile?: number;
  /**
   * A partition's file is finished once its rows take this much memory before encoding (an upper
   * bound on the file size; zstd Parquet is typically 4x smaller). @defaultValue 256 MiB
   */
  readonly maxBytesPerFile?: number;
  /** A partition's file is finished this long after its first row arrived. @defaultValue 60,000 ms */
  readonly maxFileAgeMs?: number;
  /** Sub-partition below `kline/kline_type=K/`. @defaultValue `'month'` (`month=YYYY-MM`) */
  readonly klineSubPartition?: KlineSubPartition;
  /**
   * Worker threads that encode and write files; 0 encodes on the calling thread. A file stays on
   * one thread; with 2 or more, files open at the same time (other partitions) encode in parallel.
   * @defaultValue 1
   */
  readonly encoderThreads?: number;
  /** `write()` waits while this many files are being encoded and written. @defaultValue 4 files */
  readonly maxPendingFiles?: number;
  /** `.tmp` files in `DIR/.staging/` older than this are removed on start. @defaultValue 3,600,000 ms */
  readonly staleStagingMs?: number;
  /**
   * Asked right before each finished file is committed (after it is written and fsync'd under the
   * staging directory; locally holding the table's publish lock, on S3 before the conditional
   * PUT): when it returns false the file is deleted instead and the writer fails with
   * `QF_FENCED`. A worker of several passes its lease here (`ClusterMembership`), so one paused
   * past its lease cannot commit rows whose series another worker now writes.
   */
  readonly fence?: () => boolean;
  /**
   * The series it will write, per dataset (kline `CODE|K`, depth codes, suspension exchanges),
   * claimed in each table's log before any file (`ready()` resolves then; `ifOwned` says what
   * happens when another live writer owns one). Series not named are claimed with the first file
   * holding them (refused if another live writer owns them). Not with `publish: 'on-commit'`
   * (the committer claims).
   */
  readonly series?: Partial<Record<DatasetKind, readonly string[]>>;
  /**
   * `'immediate'`: a finished file is renamed into place at once. `'on-commit'`: it stays staged
   * (`DIR/.staging/….ready.tmp`, fsync'd) and `flush()` returns it with `stagedPath`; whoever
   * commits it to the dataset's {@link DatasetLog} publishes it (K-line sync does, with the series'
   * watermarks, so a checkpoint's files land all together or not at all). `fence` is then the
   * committer's to ask. @defaultValue `'immediate'`
   */
  readonly publish?: 'immediate' | 'on-commit';
  /**
   * Each table it commits to kept healthy while it is written, in the background, as
   * `DatasetSink` does ({@link TableUpkeep}): small files merged as they accumulate (tiered in a
   * partition still written, whole in a closed one: a depth `date=` from the next UTC day on the
   * pipeline's clock; a suspension `exchange=` is never closed), a Delta checkpoint of the newest
   * version, log versions and removed files deleted after the retention. `false` turns it off;
   * not with `publish: 'on-commit'` (the committer keeps its table).
   * @defaultValue on, with `TABLE_UPKEEP_DEFAULTS`
   */
  readonly upkeep?: false | TableUpkeepOptions;
  /** Everything upkeep reports, per table: compactions, checkpoints, failures, where it stands, falling behind. */
  readonly onUpkeep?: (event: UpkeepEvent) => void;
  /** Called for every finished file, after it was committed and renamed into place. */
  readonly onFile?: (file: WrittenFile) => void;
  /** Called once when a file fails in the background; the error is also raised by the next call. */
  readonly onError?: (err: FileSinkError) => void;
  /**
   * The pipeline's clock: file names, file age (`maxFileAgeMs` runs on its timers) and depth ticks
   * without a tick time. @defaultValue core's `systemClock`
   */
  readonly clock?: Clock;
}

/** Defaults of {@link DatasetWriterOptions}. */
export const DATASET_WRITER_DEFAULTS = {
  format: 'parquet',
  maxRowsPerFile: 1_000_000,
  maxBytesPerFile: 256 * 1024 * 1024,
  maxFileAgeMs: 60_000,
  klineSubPartition: 'month',
  encoderThreads: 1,
  maxPendingFiles: 4,
  staleStagingMs: 3_600_000,
} as const satisfies Partial<DatasetWriterOptions>;

/** A file the writer finished and renamed into place. */
export interface WrittenFile {
  readonly kind: DatasetKind;
  readonly format: DatasetFormat;
  /** Absolute path. */
  readonly path: string;
  /** Path relative to `DIR`, e.g. `kline/kline_type=8/month=2026-01/part-….parquet`. */
  readonly relativePath: string;
  readonly rows: number;
  readonly bytes: number;
  /** With `publish: 'on-commit'`: where the finished file waits, relative to `DIR`. */
  readonly stagedPath?: string;
  /** Its rows' Delta statistics (`numRecords`, min/max, null counts), gathered as it was encoded. */
  readonly stats: DeltaStats;
}
