import { systemClock, type Clock } from '@quoteflow/core';
import { monotonicClock } from '@quoteflow/core/internal';
import {
  COMPACTED_FILE_MAX_ROWS,
  compactFiles,
  partitionGroups,
  type CompactedPartition,
} from './compact-dataset.js';
import type { DatasetKind } from './dataset-columns.js';
import { DatasetLog } from './dataset-log.js';
import type { LogFile } from './dataset-log-format.js';
import type { DatasetFormat } from './dataset-writer-options.js';
import { expireDeltaLog } from './delta/expire-log.js';
import { FileSinkError } from './file-sink-error.js';
import { isPartitionClosed } from './internal/closed-partitions.js';
import { planMerges } from './internal/merge-plan.js';
import type { ObjectStore } from './storage/object-store.js';
import { VACUUM_DEFAULT_RETENTION_MS, vacuumLog } from './vacuum-dataset.js';

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
  /** The pipeline's clock: which partitions are closed (an earlier month than its time). @defaultValue the system clock */
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

/** Checkpoints of versions on this grid stay for the retention; the others go once superseded. */
const CHECKPOINT_GRID = 10;
/** How long a checkpoint off the grid stays after a newer one was written (a reader that read the pointer to it reads it well within that). */
const SUPERSEDED_CHECKPOINT_MS = 600_000;

/** A merge due: small files of one partition and format. */
interface DueMerge {
  readonly partition: string;
  readonly format: DatasetFormat;
  readonly files: readonly LogFile[];
  /** The partition being written, merged whole after a UTC midnight (see `#plan`). */
  readonly daily: boolean;
}

const DAY_MS = 86_400_000;

/**
 * Keeps one Delta table healthy while its writer ingests, as Delta's own writers do
 * (auto-compaction, checkpoints, log cleanup, vacuum), in the background: {@link nudge} after a
 * commit starts a round unless one runs, and the writer never waits for it (a merge is built
 * beside the table and committed in one version; the local publish lock is held for its
 * partition swap only). A round:
 *
 * - merges small files, tiered (see `planMerges`): in the partition being written, each time four
 *   files of a size tier are there they become one of the next tier, so it holds a bounded number
 *   of files at any moment; a closed partition is merged whole, and so is the partition being
 *   written once a day, in the first round after each UTC midnight of the pipeline's clock the
 *   process sees (so the day before reads as one file, or one per `rowsPerFile`, not the six or so
 *   its tiers leave; a row is rewritten at most once a day more, until its file is full). Each merge is `remove` + `add` in
 *   one version, exactly as `compactDataset`: at every version a reader sees each row once, also
 *   across kill -9. Several writers sharing the table compact without coordinating: the log fences
 *   them (Delta's optimistic concurrency): a merge whose files another writer replaced first is
 *   void (an event) and nothing of it is committed;
 * - ends with a Delta checkpoint of the version it reached (`checkpointEvery`; locally too), so
 *   a reader opens the table from it and at most the commits since (between merges, one every 10
 *   versions at least);
 * - at most every half retention (and hourly): deletes the log files of versions before the
 *   newest checkpoint older than the log's retention (Delta's log retention: a JSON log
 *   compaction is not enough, delta-rs, Polars and DuckDB do not read one; an hour by default,
 *   see `logRetentionMs`) and, on object storage, the files removed longer ago than the
 *   retention (vacuum).
 *
 * Work due longer than `behindAfterMs` is reported (`upkeep-behind`), and once done again
 * (`upkeep-caught-up`); {@link status} says where it stands at any moment.
 */
export class TableUpkeep {
  readonly #log: DatasetLog;
  readonly #options: TableUpkeepOpenOptions;
  readonly #clock: Clock;
  readonly #monotonic: Clock;
  readonly #wall: Clock;
  readonly #rowsPerFile: number;
  readonly #retentionMs: number;
  readonly #logRetentionMs: number;
  readonly #checkpointEvery: number;
  readonly #behindAfterMs: number;
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #lastCheckpoint: number;
  #lastRetentionMs: number | undefined;
  #mergesDue = 0;
  /** Since when (monotonic ms) work has been due without pause. */
  #dueSince: number | undefined;
  #behind = false;
  /** The UTC day (of the pipeline's clock) the process opened on: its first daily merge is the next day's. */
  readonly #openedDay: number;
  /** The UTC day of `#mergedToday`: the partitions being written that were merged whole that day. */
  #today: number;
  readonly #mergedToday = new Set<string>();

  private constructor(log: DatasetLog, options: TableUpkeepOpenOptions, lastCheckpoint: number) {
    this.#log = log;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#monotonic = options.monotonic ?? monotonicClock;
    this.#wall = options.wall ?? systemClock;
    this.#rowsPerFile = options.rowsPerFile ?? TABLE_UPKEEP_DEFAULTS.rowsPerFile;
    this.#retentionMs = options.retentionMs ?? TABLE_UPKEEP_DEFAULTS.retentionMs;
    this.#logRetentionMs = logRetentionOf(options);
    this.#checkpointEvery = options.checkpointEvery ?? TABLE_UPKEEP_DEFAULTS.checkpointEvery;
    this.#behindAfterMs = options.behindAfterMs ?? TABLE_UPKEEP_DEFAULTS.behindAfterMs;
    this.#lastCheckpoint = lastCheckpoint;
    this.#openedDay = this.#today = Math.floor(this.#clock.now() / DAY_MS);
  }

  /**
   * Checks the options (a bad one: `QF_INVALID_OPTION` naming it) and reads the table's log (a log
   * of its own, beside the writer's). Nothing runs until {@link nudge}.
   */
  static async open(options: TableUpkeepOpenOptions): Promise<TableUpkeep> {
    checkUpkeepOptions(options, 'upkeep');
    const retentionMs = options.retentionMs ?? TABLE_UPKEEP_DEFAULTS.retentionMs;
    const log = await DatasetLog.open(options.root, options.dataset, {
      tombstoneRetentionMs: retentionMs,
      ...(options.store === undefined ? {} : { store: options.store }),
    });
    return new TableUpkeep(log, options, await lastCheckpointOf(log));
  }

  /** Where upkeep stands now. */
  get status(): UpkeepStatus {
    return {
      dataset: this.#log.dataset,
      mergesDue: this.#mergesDue,
      versionsSinceCheckpoint: Math.max(0, this.#log.version - this.#lastCheckpoint),
      pendingMs: this.#dueSince === undefined ? 0 : this.#monotonic.now() - this.#dueSince,
      behind: this.#behind,
    };
  }

  /** The table changed (a commit): a round starts unless one runs, then another after it. */
  nudge(): void {
    if (this.#closed) return;
    this.#again = true;
    this.#checkBehind();
    this.#emit({ type: 'upkeep-status', status: this.status });
    this.#running ??= this.#rounds().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves once no round runs (after the one running and any it was nudged for). */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Stops: a merge being built is dropped (nothing of it committed); waits for the round to end. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    await this.idle();
  }

  async #rounds(): Promise<void> {
    while (this.#again && !this.#closed) {
      this.#again = false;
      await this.#round();
    }
  }

  /**
   * One round: until nothing is due, a checkpoint when due, the retention's work when due, then
   * the smallest merge due. Checkpoints and the retention come between merges, so a writer that
   * keeps merges due (a slow store, a burst of commits) never starves them.
   */
  async #round(): Promise<void> {
    if (!(await this.#step('read', () => this.#log.refresh()))) return;
    for (;;) {
      if (this.#closed) return;
      // Between merges one every 10 versions at least; the round ends with one anyway.
      if (this.#checkpointEvery > 0 && this.#log.version - this.#lastCheckpoint >= this.#midRound)
        await this.#step('checkpoint', () => this.#checkpoint());
      await this.#retention();
      const merge = this.#plan()[0];
      if (merge === undefined || this.#closed) break;
      const ok = await this.#step('compact', async () => {
        const { partition, files } = merge;
        this.#emit({
          type: 'compaction-started',
          dataset: this.#log.dataset,
          partition,
          files: files.length,
        });
        const result = await compactFiles(this.#log, merge, {
          maxRows: this.#rowsPerFile,
          now: () => this.#clock.now(),
          signal: this.#abort.signal,
        });
        // Committed or void (another writer merged first): either way today's is done.
        if (merge.daily) this.#mergedToday.add(partition);
        const dataset = this.#log.dataset;
        if (result === undefined)
          this.#emit({ type: 'compaction-void', dataset, partition: merge.partition });
        else this.#emit({ type: 'compacted', dataset, result });
        await this.#log.refresh();
      });
      if (!ok) return;
    }
    if (this.#checkpointEvery > 0 && this.#log.version - this.#lastCheckpoint >= this.#checkpointEvery)
      await this.#step('checkpoint', () => this.#checkpoint());
    if (this.#mergesDue === 0 && !this.#checkpointDue()) this.#caughtUp();
    this.#emit({ type: 'upkeep-status', status: this.status });
  }

  /** A Delta checkpoint of the version read, unless another writer of the table wrote one lately. */
  async #checkpoint(): Promise<void> {
    this.#lastCheckpoint = Math.max(this.#lastCheckpoint, await lastCheckpointOf(this.#log));
    if (this.#log.version - this.#lastCheckpoint < this.#checkpointEvery) return;
    this.#lastCheckpoint = await this.#log.checkpoint();
    this.#emit({ type: 'checkpointed', dataset: this.#log.dataset, version: this.#lastCheckpoint });
  }

  /** Log expiry and vacuum, at most every half of the shorter retention (and at least hourly). */
  async #retention(): Promise<void> {
    const nowMs = this.#monotonic.now();
    const everyMs = Math.min(3_600_000, this.#retentionMs / 2, this.#logRetentionMs / 2);
    if (this.#lastRetentionMs !== undefined && nowMs - this.#lastRetentionMs < everyMs) return;
    this.#lastRetentionMs = nowMs;
    const dataset = this.#log.dataset;
    await this.#step('expire', async () => {
      const gone = await expireDeltaLog(this.#log.store, dataset, this.#logRetentionMs, this.#wall.now(), {
        keepEvery: CHECKPOINT_GRID,
        supersededForMs: SUPERSEDED_CHECKPOINT_MS,
      });
      if (gone.length > 0) this.#emit({ type: 'log-expired', dataset, deleted: gone.length });
    });
    if (this.#log.remote && !this.#closed)
      await this.#step('vacuum', async () => {
        const { deleted } = await vacuumLog(this.#log, this.#retentionMs, this.#wall.now());
        if (deleted.length > 0) this.#emit({ type: 'vacuumed', dataset, deleted: deleted.length });
      });
  }

  /**
   * The merges due now, smallest first (the partition being written before a closed month's whole
   * merge). After a UTC midnight the partition being written is planned as a closed one, once.
   */
  #plan(): DueMerge[] {
    const nowMs = this.#clock.now();
    const today = Math.floor(nowMs / DAY_MS);
    if (today !== this.#today) {
      this.#today = today;
      this.#mergedToday.clear();
    }
    const due: DueMerge[] = [];
    for (const group of partitionGroups(this.#log.files, undefined)) {
      const { partition } = group;
      const closed = isPartitionClosed(partition, nowMs);
      const daily = !closed && today > this.#openedDay && !this.#mergedToday.has(partition);
      const merges = planMerges(group.files, { targetRows: this.#rowsPerFile, closed: closed || daily });
      // Fewer than two small files: nothing to merge whole today.
      if (daily && merges.length === 0) this.#mergedToday.add(partition);
      for (const files of merges) due.push({ partition, format: group.format, files, daily });
    }
    const rows = (m: DueMerge) => m.files.reduce((n, f) => n + Math.max(0, f.rows), 0);
    due.sort((a, b) => rows(a) - rows(b));
    this.#mergesDue = due.length;
    if (due.length > 0 || this.#checkpointDue()) this.#dueSince ??= this.#monotonic.now();
    this.#checkBehind();
    return due;
  }

  /** Versions between two checkpoints in a round of many merges. */
  get #midRound(): number {
    return Math.max(this.#checkpointEvery, CHECKPOINT_GRID);
  }

  /** A checkpoint is overdue: twice the versions a round of merges may go without one. */
  #checkpointDue(): boolean {
    if (this.#checkpointEvery === 0) return false;
    return this.#log.version - this.#lastCheckpoint >= 2 * this.#midRound;
  }

  /** Runs one step; a failure is an event (and the round ends), an abort by `close()` is quiet. */
  async #step(
    step: 'read' | 'compact' | 'checkpoint' | 'expire' | 'vacuum',
    work: () => Promise<unknown>,
  ): Promise<boolean> {
    try {
      await work();
      return true;
    } catch (err) {
      if (this.#closed && this.#abort.signal.aborted) return false;
      this.#dueSince ??= this.#monotonic.now();
      const error = err instanceof Error ? err : new Error(String(err));
      this.#emit({ type: 'upkeep-failed', dataset: this.#log.dataset, step, error });
      this.#checkBehind();
      return false;
    }
  }

  #checkBehind(): void {
    if (this.#behind || this.#dueSince === undefined) return;
    if (this.#monotonic.now() - this.#dueSince < this.#behindAfterMs) return;
    this.#behind = true;
    this.#emit({ type: 'upkeep-behind', status: this.status });
  }

  #caughtUp(): void {
    const was = this.#behind;
    const status = this.status;
    this.#dueSince = undefined;
    this.#behind = false;
    if (was) this.#emit({ type: 'upkeep-caught-up', status });
  }

  #emit(event: UpkeepEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch {
      // A listener's failure is its own: upkeep goes on.
    }
  }
}

/** What a table writer passes to {@link openWriterUpkeep}: its options and listeners. */
export interface WriterUpkeepOptions {
  /** `false`: none; `undefined`: the defaults. */
  readonly upkeep?: false | TableUpkeepOptions | undefined;
  readonly clock?: Clock | undefined;
  readonly onEvent?: (event: UpkeepEvent) => void;
}

/**
 * The upkeep of the table a writer commits to (`DatasetSink`, `DatasetWriter`): on the table of
 * the writer's log (a log of its own, on the same store), reporting to the writer's listener;
 * `undefined` when turned off.
 */
export async function openWriterUpkeep(
  log: DatasetLog,
  options: WriterUpkeepOptions,
): Promise<TableUpkeep | undefined> {
  if (options.upkeep === false) return undefined;
  const onEvent = options.onEvent;
  return TableUpkeep.open({
    ...options.upkeep,
    root: log.root,
    dataset: log.dataset,
    ...(log.remote ? { store: log.store } : {}),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(onEvent === undefined ? {} : { onEvent }),
  });
}

/** The `DatasetLog.open` options a writer's upkeep asks for: removed files remembered as long as it keeps them. */
export function upkeepLogOptions(upkeep: false | TableUpkeepOptions | undefined): {
  tombstoneRetentionMs?: number;
} {
  return upkeep === undefined || upkeep === false || upkeep.retentionMs === undefined
    ? {}
    : { tombstoneRetentionMs: upkeep.retentionMs };
}

/** The version `_last_checkpoint` names (-1: none yet). */
async function lastCheckpointOf(log: DatasetLog): Promise<number> {
  const bytes = await log.store.read(`${log.dataset}/_delta_log/_last_checkpoint`).catch(() => undefined);
  if (bytes === undefined) return -1;
  try {
    const v = (JSON.parse(Buffer.from(bytes).toString('utf8')) as { version?: unknown }).version;
    return typeof v === 'number' && Number.isInteger(v) ? v : -1;
  } catch {
    return -1;
  }
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
