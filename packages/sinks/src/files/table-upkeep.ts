import { systemClock, type Clock } from '@quoteflow/core';
import { monotonicClock } from '@quoteflow/core/internal';
import { compactFiles, partitionGroups } from './compact-dataset.js';
import { DatasetLog } from './dataset-log.js';
import type { LogFile } from './dataset-log-format.js';
import type { DatasetFormat } from './dataset-writer-options.js';
import { expireDeltaLog } from './delta/expire-log.js';
import { isPartitionClosed } from './internal/closed-partitions.js';
import { planMerges } from './internal/merge-plan.js';
import {
  checkUpkeepOptions,
  logRetentionOf,
  TABLE_UPKEEP_DEFAULTS,
  type TableUpkeepOpenOptions,
  type TableUpkeepOptions,
  type UpkeepEvent,
  type UpkeepStatus,
} from './table-upkeep-options.js';
import { vacuumLog } from './vacuum-dataset.js';

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
