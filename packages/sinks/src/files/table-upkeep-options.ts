/**
 * What table upkeep is told and tells (`TableUpkeep`'s options, defaults, status and events), and
 * how a writer's options are checked: the part of upkeep a writer's options and the CLI need
 * without loading its machinery.
 */
import type { Clock } from '@quoteflow/core';
import { COMPACTED_FILE_MAX_ROWS, type CompactedPartition } from './compact-dataset.js';
import type { DatasetKind } from './dataset-columns.js';
import { FileSinkError } from './file-sink-error.js';
import type { ObjectStore } from './storage/object-store.js';
import { VACUUM_DEFAULT_RETENTION_MS } from './vacuum-dataset.js';

/** What a table's upkeep does and how often (defaults in {@link TABLE_UPKEEP_DEFAULTS}). */
export interface TableUpkeepOptions {
  /**
   * A file of this many rows is full: small files are merged into files of at most this many rows
   * and full ones are left alone (as `quoteflow compact --max-rows-per-file`).
   */
  readonly rowsPerFile?: number;
  /**
   * Files a compaction removed are deleted this long after (on object storage; locally the
   * partition swap removes them at once). It must exceed the longest a writer takes from uploading
   * a file to committing it. It caps the log's retention (see `logRetentionMs`).
   */
  readonly retentionMs?: number;
  /**
   * Log versions before a Delta checkpoint expire this long after it was written: time travel
   * reaches back this far. A sync commits every 30 s (2,880 versions a day), and every reader lists
   * the log: locally DuckDB lists the whole directory (about 1.8 ms more per 1,000 files); on S3
   * readers list from their checkpoint on, but a server may still walk the whole prefix (S3Proxy
   * did: a day's 4,149 log files made DuckDB read in 0.42 s what it reads in 0.11 s from a log of
   * 200; BENCHMARKS.md, table upkeep). So the default is an hour (or `retentionMs` if shorter),
   * locally and on object storage alike: about 200 log files. Locally time travel reaches no
   * further than the partition's last compaction anyway, whose swap deleted the files before it;
   * on object storage set it up to `retentionMs` to time travel as far as vacuum allows.
   * @defaultValue min(1 hour, `retentionMs`)
   */
  readonly logRetentionMs?: number;
  /**
   * A Delta checkpoint of the version a round of upkeep ends at once the log is this many
   * versions past the newest checkpoint (Delta's `checkpointInterval`, whose default is 10). The
   * default, 1, checkpoints after every commit in effect: quoteflow's commits carry each series'
   * watermark, so a reader replaying even a few of them (DuckDB: about 20 ms each for 1,000
   * series) costs more than the checkpoint; those off every 10th version are deleted again once a
   * newer one has stood for 10 minutes. 0 writes none (then no log version expires either, as
   * none is covered by a checkpoint).
   * Locally a checkpoint is `DIR/<dataset>/_delta_log/<v>.checkpoint.parquet`: a plain Parquet
   * glob of a table names its partition directories (`kline_type=…` of `DIR/kline`), so that it
   * does not reach into `_delta_log/`.
   */
  readonly checkpointEvery?: number;
  /** Upkeep whose work has been due this long without being done is behind (an event; a metric and a warning in the CLI). */
  readonly behindAfterMs?: number;
}

/** Defaults of {@link TableUpkeepOptions} (`logRetentionMs` is capped by `retentionMs`: see there). */
export const TABLE_UPKEEP_DEFAULTS = {
  rowsPerFile: COMPACTED_FILE_MAX_ROWS,
  retentionMs: VACUUM_DEFAULT_RETENTION_MS,
  /** The log's retention, unless `retentionMs` is shorter. */
  logRetentionMs: 3_600_000,
  checkpointEvery: 1,
  behindAfterMs: 600_000,
} as const satisfies Required<TableUpkeepOptions>;

/** The log's retention of a table upkeep keeps (see {@link TableUpkeepOptions.logRetentionMs}). */
export function logRetentionOf(options: TableUpkeepOptions): number {
  const retentionMs = options.retentionMs ?? TABLE_UPKEEP_DEFAULTS.retentionMs;
  return options.logRetentionMs ?? Math.min(TABLE_UPKEEP_DEFAULTS.logRetentionMs, retentionMs);
}

/** Options of {@link TableUpkeep.open}. */
export interface TableUpkeepOpenOptions extends TableUpkeepOptions {
  /** The dataset root on this disk, or the scratch directory of `store` (as `DatasetLog.open`). */
  readonly root: string;
  /** Which of the root's tables (`root/<dataset>/_delta_log/`). */
  readonly dataset: DatasetKind;
  /** The object store holding the table, when not under `root`. */
  readonly store?: ObjectStore;
  /**
   * The pipeline's clock: which partitions are closed (an earlier month than its time), and when a
   * UTC day begins (the partition being written is merged whole once a day). @defaultValue the system clock
   */
  readonly clock?: Clock;
  /** The clock of how long work has been due and of the retention's rounds. @defaultValue core's `monotonicClock` */
  readonly monotonic?: Clock;
  /**
   * The wall clock the files' stamps (their modification times) are judged against for the log's
   * retention and vacuum: a bench ages a table its simulated day wrote in minutes. @defaultValue the system clock
   */
  readonly wall?: Clock;
  /** What upkeep did and where it stands (never throws into it). */
  readonly onEvent?: (event: UpkeepEvent) => void;
}

/** Where a table's upkeep stands. */
export interface UpkeepStatus {
  readonly dataset: DatasetKind;
  /** Merges of small files due and not done yet. */
  readonly mergesDue: number;
  /** Log versions since the newest Delta checkpoint. */
  readonly versionsSinceCheckpoint: number;
  /** How long work has been due without being done (0: none is), ms. */
  readonly pendingMs: number;
  /** Work has been due longer than `behindAfterMs`. */
  readonly behind: boolean;
}

/** What a table's upkeep reports. */
export type UpkeepEvent =
  /** A merge of `files` small files of `partition` is being built. */
  | {
      readonly type: 'compaction-started';
      readonly dataset: DatasetKind;
      readonly partition: string;
      readonly files: number;
    }
  | { readonly type: 'compacted'; readonly dataset: DatasetKind; readonly result: CompactedPartition }
  /** Another writer compacted one of the files first: this build was dropped, nothing of it committed. */
  | { readonly type: 'compaction-void'; readonly dataset: DatasetKind; readonly partition: string }
  | { readonly type: 'checkpointed'; readonly dataset: DatasetKind; readonly version: number }
  /** Log files (commits, checkpoints) of versions before a checkpoint older than the log's retention, deleted. */
  | { readonly type: 'log-expired'; readonly dataset: DatasetKind; readonly deleted: number }
  /** Data files removed (or never committed) longer ago than the retention, deleted. */
  | { readonly type: 'vacuumed'; readonly dataset: DatasetKind; readonly deleted: number }
  /** A step failed; it is tried again (a failure that lasts makes upkeep behind). */
  | {
      readonly type: 'upkeep-failed';
      readonly dataset: DatasetKind;
      readonly step: 'read' | 'compact' | 'checkpoint' | 'expire' | 'vacuum';
      readonly error: Error;
    }
  /** Where upkeep stands: at each nudge (each commit of the writer) and after each round. */
  | { readonly type: 'upkeep-status'; readonly status: UpkeepStatus }
  | { readonly type: 'upkeep-behind'; readonly status: UpkeepStatus }
  | { readonly type: 'upkeep-caught-up'; readonly status: UpkeepStatus };

/** The `DatasetLog.open` options a writer's upkeep asks for: removed files remembered as long as it keeps them. */
export function upkeepLogOptions(upkeep: false | TableUpkeepOptions | undefined): {
  tombstoneRetentionMs?: number;
} {
  return upkeep === undefined || upkeep === false || upkeep.retentionMs === undefined
    ? {}
    : { tombstoneRetentionMs: upkeep.retentionMs };
}

/**
 * Checks {@link TableUpkeepOptions}: `QF_INVALID_OPTION` naming the first bad one (`where` says
 * whose: `upkeep`, a CLI flag's owner…).
 */
export function checkUpkeepOptions(options: TableUpkeepOptions, where: string): void {
  const bad = (name: string, want: string, got: unknown): never => {
    throw new FileSinkError('QF_INVALID_OPTION', `${where}: "${name}" must be ${want}, got ${String(got)}`);
  };
  const { rowsPerFile, retentionMs, logRetentionMs, checkpointEvery, behindAfterMs } = options;
  if (rowsPerFile !== undefined && (!Number.isInteger(rowsPerFile) || rowsPerFile < 1))
    bad('rowsPerFile', 'an integer >= 1', rowsPerFile);
  if (retentionMs !== undefined && (!Number.isFinite(retentionMs) || retentionMs < 0))
    bad('retentionMs', 'a number of ms >= 0', retentionMs);
  if (logRetentionMs !== undefined && (!Number.isFinite(logRetentionMs) || logRetentionMs < 0))
    bad('logRetentionMs', 'a number of ms >= 0', logRetentionMs);
  if (checkpointEvery !== undefined && (!Number.isInteger(checkpointEvery) || checkpointEvery < 0))
    bad('checkpointEvery', 'an integer >= 0', checkpointEvery);
  if (behindAfterMs !== undefined && (!Number.isFinite(behindAfterMs) || behindAfterMs < 0))
    bad('behindAfterMs', 'a number of ms >= 0', behindAfterMs);
}
