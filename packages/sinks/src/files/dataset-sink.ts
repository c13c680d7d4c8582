import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type BarUpdate, type Clock, type KlineType, seriesKey } from '@quoteflow/core';
import type { CommittingSink, SinkCheckpoint } from '../committing-sink.js';
import type { CompactedPartition } from './compact-dataset.js';
import type { LogFile, SeriesWatermark } from './dataset-log-format.js';
import { DatasetLog } from './dataset-log.js';
import { DatasetWriter } from './dataset-writer.js';
import type { DatasetFormat, WrittenFile } from './dataset-writer-options.js';
import { FileSinkError } from './file-sink-error.js';
import { SeriesIntake } from '../series-intake.js';
import { summarizeKlineFile } from './read-dataset-rows.js';
import { openStore, type OpenedStore } from './storage/open-store.js';
import { openWriterUpkeep, type TableUpkeep } from './table-upkeep.js';
import {
  checkUpkeepOptions,
  upkeepLogOptions,
  type TableUpkeepOptions,
  type UpkeepEvent,
  type UpkeepStatus,
} from './table-upkeep-options.js';
import { ifOwnedOf, type TableClaimOptions, type TableWriterOptions } from './table-writer.js';
import { requirePackagesOf } from '../internal/optional-packages.js';

/** Options of {@link DatasetSink.open}; defaults in {@link DATASET_SINK_DEFAULTS}. */
export interface DatasetSinkOptions extends TableWriterOptions {
  /**
   * The dataset root `DIR` (closed bars go to `DIR/kline/kline_type=K/month=YYYY-MM/`), or
   * `s3://bucket/prefix` (the AWS SDK's configuration: environment, profile, `AWS_ENDPOINT_URL`).
   */
  readonly dir: string;
  readonly format?: DatasetFormat;
  /** The pipeline's clock: checkpoints, file age and which partitions are closed run on it. */
  readonly clock?: Clock;
  /** How often a pipeline should checkpoint this sink (one commit of the dataset's log each). */
  readonly checkpointEveryMs?: number;
  /** A file is finished this long after its first row at the latest (it stays staged until committed). */
  readonly maxFileAgeMs?: number;
  /**
   * Worker threads that encode files; 0 encodes on the calling thread (small live checkpoints),
   * 1 or more keeps large backfill checkpoints off it.
   */
  readonly encoderThreads?: number;
  /**
   * Asked holding the dataset's publish lock right before each commit: false means this writer may
   * no longer write its series (a cluster worker whose lease lapsed); the checkpoint's files are
   * dropped and `checkpoint()` rejects with `QF_FENCED`.
   */
  readonly fence?: () => boolean;
  /**
   * The table kept healthy while it is written, in the background ({@link TableUpkeep}): small
   * files merged as they accumulate (tiered, in the partition being written too), a Delta
   * checkpoint of the newest version, log versions and removed files deleted after the retention.
   * `false` turns it off. @defaultValue on, with `TABLE_UPKEEP_DEFAULTS`
   */
  readonly upkeep?: false | TableUpkeepOptions;
  /** Called for each partition upkeep compacted. */
  readonly onCompacted?: (result: CompactedPartition) => void;
  /** Everything upkeep reports: compactions, checkpoints, failures, where it stands, falling behind. */
  readonly onUpkeep?: (event: UpkeepEvent) => void;
  /**
   * The series (core's `seriesKey`, `CODE|K`) this sink will write, claimed in the table's log
   * when it opens, before their watermarks are read (`DatasetLog.claim`; `ifOwned` says what
   * happens when another live writer owns one). Series not named are claimed at the first
   * checkpoint holding their bars (refused there if another live writer owns them).
   */
  readonly series?: readonly string[];
}

/** Defaults of {@link DatasetSinkOptions}. */
export const DATASET_SINK_DEFAULTS = {
  format: 'parquet',
  checkpointEveryMs: 30_000,
  maxFileAgeMs: 60_000,
  encoderThreads: 0,
} as const satisfies Partial<DatasetSinkOptions>;

/**
 * The K-line dataset under `DIR` as a {@link CommittingSink}: closed bars are staged in Parquet
 * (or Arrow, NDJSON) files and each checkpoint is one commit of the dataset's log
 * (the Delta log `DIR/kline/_delta_log/`): its files and what each series gained land together or not at
 * all, also across kill -9. Its watermarks are the log's, so a restart or a takeover reads the log,
 * not every file; files on disk that no commit names (an earlier quoteflow, a crash before the log
 * existed) are read once and committed at open. Forming bars are not written.
 *
 * The table arbitrates between its writers: the sink claims its series in the log before it
 * writes them (`series`, else at the first checkpoint holding them), renews the claims with its
 * commits (and alone every third of `leaseMs` while idle) and gives them up when it closes. A
 * second writer of the same series, in this process or another, is refused at its claim while
 * this one lives (`QF_OWNED`), and a checkpoint of a series another writer took over is refused
 * (`QF_FENCED`): its files are dropped and the sink fails.
 *
 * @example
 * ```ts
 * const files = await DatasetSink.open({ dir: './data' });
 * bars$.pipe(commitTo([files])).subscribe();
 * ```
 */
export class DatasetSink implements CommittingSink {
  readonly name: string;
  readonly checkpointEveryMs: number;
  readonly #log: DatasetLog;
  readonly #writer: DatasetWriter;
  readonly #intake: SeriesIntake;
  readonly #options: DatasetSinkOptions;
  readonly #clock: Clock;
  readonly #opened: OpenedStore;
  readonly #upkeep: TableUpkeep | undefined;
  /** The log version the intake's watermarks were read at (a remote commit's `since`). */
  #basis: number;
  /** Checkpoints and refreshes, one at a time (a refresh must not land inside a commit). */
  #serial: Promise<unknown> = Promise.resolve();
  /** Why a checkpoint failed: every later write and checkpoint throws it (nothing half-committed). */
  #failure: unknown;
  #closing: Promise<void> | undefined;

  private constructor(
    log: DatasetLog,
    options: DatasetSinkOptions,
    opened: OpenedStore,
    upkeep: TableUpkeep | undefined,
  ) {
    this.#log = log;
    this.#upkeep = upkeep;
    this.#opened = opened;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.name = `files ${log.store.location}`;
    this.checkpointEveryMs = options.checkpointEveryMs ?? DATASET_SINK_DEFAULTS.checkpointEveryMs;
    this.#intake = new SeriesIntake(log.series);
    this.#basis = log.version;
    this.#writer = new DatasetWriter({
      dir: log.root,
      format: options.format ?? DATASET_SINK_DEFAULTS.format,
      encoderThreads: options.encoderThreads ?? DATASET_SINK_DEFAULTS.encoderThreads,
      maxFileAgeMs: options.maxFileAgeMs ?? DATASET_SINK_DEFAULTS.maxFileAgeMs,
      publish: 'on-commit',
      clock: this.#clock,
    });
  }

  /**
   * Reads what the dataset holds from its commit log (committing, once, files on disk that no commit
   * names) and opens the writer.
   */
  static async open(options: DatasetSinkOptions): Promise<DatasetSink> {
    const { dir } = options;
    if (typeof dir !== 'string' || dir === '')
      throw new FileSinkError('QF_INVALID_OPTION', 'DatasetSink: "dir" must be a non-empty path');
    if (options.upkeep !== undefined && options.upkeep !== false)
      checkUpkeepOptions(options.upkeep, 'DatasetSink: "upkeep"');
    // Before the store is opened or a file read: a missing library is the first thing said.
    requirePackagesOf('datasets');
    const opened = await openStore(dir);
    let upkeep: TableUpkeep | undefined;
    try {
      const log = await DatasetLog.open(opened.root, 'kline', {
        summarize: (rel) => summarizeKlineFile(dir, rel),
        ...upkeepLogOptions(options.upkeep),
        ...(opened.store === undefined ? {} : { store: opened.store }),
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
        ...(options.command === undefined ? {} : { command: options.command }),
      });
      // On object storage an object no commit names is an uncommitted upload, never adopted.
      if (!log.remote) await log.transaction(async () => undefined, { adoptOrphans: true });
      // Claimed before the watermarks are read: the sink resumes where the previous owner ended.
      if ((options.series ?? []).length > 0) await log.claim(options.series!, claimOptionsOf(options));
      upkeep = await openWriterUpkeep(log, {
        upkeep: options.upkeep,
        clock: options.clock,
        onEvent: (e) => {
          if (e.type === 'compacted') options.onCompacted?.(e.result);
          options.onUpkeep?.(e);
        },
      });
      const sink = new DatasetSink(log, options, opened, upkeep);
      // What a restart finds due (a kill -9 mid-merge, a month closed meanwhile) is done at once.
      upkeep?.nudge();
      return sink;
    } catch (err) {
      await upkeep?.close();
      await opened.close();
      throw err;
    }
  }

  watermarks(): ReadonlyMap<string, SeriesWatermark> {
    return this.#intake.committed;
  }

  /**
   * Bars of a series the commits cover but the files lack (a committed file was lost): the next
   * final bar of each of these starts is written once (a repair), though the watermark covers it.
   */
  reopen(code: string, klineType: KlineType, starts: readonly number[]): void {
    this.#intake.reopen(seriesKey(code, klineType), starts);
  }

  write(update: BarUpdate): void {
    this.#check();
    if (!update.final || !this.#intake.take(update)) return;
    this.#writer.append(update);
  }

  /**
   * Stages the files of the bars taken since the last checkpoint and commits them with what each
   * series gained (one version of the log); upkeep then runs in the background (never awaited
   * here).
   */
  checkpoint(): Promise<SinkCheckpoint> {
    return this.#oneAtATime(() => this.#checkpoint());
  }

  /**
   * Claims more series for this sink (a cluster worker's takeover: `ifOwned` as at open); then
   * {@link DatasetSink.refresh} reads what the table holds of them, so each resumes where its
   * previous writer ended.
   */
  claim(series: readonly string[]): Promise<void> {
    return this.#oneAtATime(async () => {
      this.#check();
      await this.#log.claim(series, claimOptionsOf(this.#options));
    });
  }

  /** Gives up this sink's claims of `series` (handed to another writer): checkpoint first. */
  release(series: readonly string[]): Promise<void> {
    return this.#oneAtATime(async () => {
      this.#check();
      await this.#log.release(series);
    });
  }

  refresh(): Promise<void> {
    return this.#oneAtATime(async () => {
      await this.#log.transaction(async () => undefined, { adoptOrphans: !this.#log.remote });
      this.#intake.reset(this.#log.series);
      this.#basis = this.#log.version;
    });
  }

  /**
   * Drops files that are gone from disk (lost) from the commit log, so that it lists only files a
   * reader finds (each checked again holding the publish lock); what each series reached stays recorded (their bars may be written again,
   * {@link DatasetSink.reopen}). Paths the log does not name are ignored.
   */
  forget(paths: readonly string[]): Promise<void> {
    return this.#oneAtATime(async () => {
      this.#check();
      await this.#log.transaction(async (tx) => {
        // Asked again holding the lock, the log current and published: only what is really gone.
        const gone: string[] = [];
        for (const p of paths) if (this.#log.files.has(p) && !(await this.#exists(p))) gone.push(p);
        if (gone.length > 0) await tx.commit({ operation: 'checkpoint', add: [], remove: gone });
      });
    });
  }

  async #exists(path: string): Promise<boolean> {
    if (this.#log.remote) return (await this.#log.store.list(path)).some((o) => o.key === path);
    return access(join(this.#log.root, path)).then(
      () => true,
      () => false,
    );
  }

  #oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#serial.then(work);
    this.#serial = next.catch(() => undefined);
    return next;
  }

  async #checkpoint(): Promise<SinkCheckpoint> {
    this.#check();
    const gained = this.#intake.drain();
    let files: WrittenFile[];
    try {
      files = await this.#writer.flush();
      if (files.length > 0) await this.#commit(files, gained);
      else await this.#log.renew();
      this.#intake.commit();
      if (files.length > 0) this.#upkeep?.nudge();
    } catch (err) {
      this.#failure ??= err;
      throw err;
    }
    let closedBars = 0;
    for (const w of gained.values()) closedBars += w.rows;
    return { sink: this.name, closedBars, series: gained, files: files.map((f) => f.relativePath) };
  }

  /**
   * Resolves once upkeep runs no round (what a commit made due is done, or failed): for a run that
   * wants its table compacted before it closes the sink (a backfill script, a test).
   */
  async upkeepIdle(): Promise<void> {
    await this.#upkeep?.idle();
  }

  /** Where the table's upkeep stands (`undefined`: turned off). */
  get upkeepStatus(): UpkeepStatus | undefined {
    return this.#upkeep?.status;
  }

  /**
   * Stops upkeep (a merge being built is dropped, nothing of it committed), drops what was staged
   * since the last checkpoint (nothing of it is committed) and the writer, and gives up the sink's
   * claims in a last commit. Rejects when that commit fails (the claims then lapse with the
   * process, or the lease), unless the sink had failed before.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#upkeep?.close();
      const staged = await this.#writer.flush().catch(() => [] as WrittenFile[]);
      await this.#writer.close().catch(() => undefined);
      await dropStaged(this.#log.root, staged);
      try {
        await this.#serial.then(() => this.#log.release());
      } catch (err) {
        if (this.#failure === undefined) throw err;
      } finally {
        await this.#opened.close();
      }
    })();
    return this.#closing;
  }

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#closing !== undefined) throw new FileSinkError('QF_CLOSED', `${this.name} is closed`);
  }

  async #commit(files: readonly WrittenFile[], gained: ReadonlyMap<string, SeriesWatermark>): Promise<void> {
    const fence = this.#options.fence;
    // Series not claimed yet (bars of series not named at open) are claimed first, in a commit of
    // their own; another live writer's claim refuses this checkpoint.
    const unclaimed = [...gained.keys()].filter((s) => !this.#log.claimed.has(s));
    if (unclaimed.length > 0) {
      const ifOwned = ifOwnedOf(this.#options) === 'take-over' ? 'take-over' : 'fail';
      await this.#log.claim(unclaimed, { ifOwned }).catch(async (err: unknown) => {
        await dropStaged(this.#log.root, files);
        throw err;
      });
    }
    // The Parquet files' Delta statistics were gathered while they were encoded: nothing is read
    // back, and other writers of the dataset wait only for the commit itself.
    const add: LogFile[] = files.map((f) => ({
      path: f.relativePath,
      rows: f.rows,
      bytes: f.bytes,
      ...(f.stagedPath === undefined ? {} : { staged: f.stagedPath }),
      ...(f.relativePath.endsWith('.parquet') ? { stats: f.stats } : {}),
    }));
    let fenced: boolean;
    try {
      fenced = await this.#log.transaction(async (tx) => {
        // Asked holding the publish lock, right before the commit: a writer whose lease lapsed
        // (another may now write its series) publishes nothing. On object storage the log asks
        // it right before the conditional PUT, after the upload.
        if (!this.#log.remote && fence !== undefined && !fence()) return true;
        await tx.commit({
          operation: 'checkpoint',
          add,
          series: Object.fromEntries(gained),
          ...(fence === undefined ? {} : { fence }),
          since: this.#basis,
        });
        return false;
      });
    } catch (err) {
      if (err instanceof FileSinkError && err.code === 'QF_FENCED') await dropStaged(this.#log.root, files);
      throw err;
    }
    if (!fenced) return;
    await dropStaged(this.#log.root, files);
    throw new FileSinkError(
      'QF_FENCED',
      `${this.name}: ${files.length} file(s) not committed: this writer may no longer write its series (its lease lapsed)`,
    );
  }
}

/** The claim options of a sink's options. */
function claimOptionsOf(o: DatasetSinkOptions): TableClaimOptions {
  return {
    ifOwned: ifOwnedOf(o),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
    ...(o.onWaiting === undefined ? {} : { onWaiting: o.onWaiting }),
  };
}

/** Removes staged files that will never be committed. */
async function dropStaged(root: string, files: readonly WrittenFile[]): Promise<void> {
  await Promise.all(
    files.map((f) =>
      f.stagedPath === undefined ? undefined : rm(join(root, f.stagedPath), { force: true }),
    ),
  );
}
