import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { makeDirectory, writeFileDurably } from '@quoteflow/core';
import type { DatasetKind } from './dataset-columns.js';
import {
  addWatermark,
  LogEntrySchema,
  normalizeSeriesKey,
  LogSnapshotSchema,
  parseLogFileName,
  snapshotFileName,
  versionFileName,
  type LogEntry,
  type LogFile,
  type LogOperation,
  type LogSnapshot,
  type SeriesWatermark,
} from './dataset-log-format.js';
import { FileSinkError } from './file-sink-error.js';
import { applyLogEntry } from './internal/apply-log-entry.js';
import { acquirePublishLock, type PublishLockOptions } from './internal/publish-lock.js';

/** The directory of the commit logs under a dataset root: `DIR/_quoteflow_log/<dataset>/`. */
export const DATASET_LOG_DIR = '_quoteflow_log';

/** What a file on disk that no commit named holds (for `adopt`): its rows, and per series what they add. */
export interface FileSummary {
  readonly rows: number;
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
}

/** Options of {@link DatasetLog.open}. */
export interface DatasetLogOptions {
  /** Wall-clock time (epoch ms) for commit times and the publish lock, shared by every process. */
  readonly now?: () => number;
  readonly lock?: PublishLockOptions;
  /** A snapshot of the whole state is written every this many versions. @defaultValue 100 */
  readonly snapshotEvery?: number;
  /** Reads a file found on disk that no commit named. @defaultValue rows unknown (-1), no series */
  readonly summarize?: (relativePath: string) => Promise<FileSummary>;
}

/** What a transaction commits (the log fills in version, time and writer). */
export interface LogChange {
  readonly operation: LogOperation;
  readonly add: readonly LogFile[];
  readonly remove?: readonly string[];
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
  readonly swap?: { readonly partition: string; readonly staged: string };
}

/** Inside {@link DatasetLog.transaction}: the publish lock is held and the log is current. */
export interface DatasetTransaction {
  /** Commits the change as the next version, then publishes it (renames, partition swap). */
  commit(change: LogChange): Promise<LogEntry>;
}

const WRITER = `${hostname().replaceAll('~', '_')}~${process.pid}~${randomBytes(4).toString('hex')}`;

/**
 * The commit log of one dataset, after Delta Lake's protocol reduced to what one directory of
 * Hive-partitioned files needs: version `n` is the file `<n>.json`, created with `link()` (which
 * fails if it exists), so of two writers at most one commits each version; a commit names the files
 * it adds and removes and what each series gained, and is published (staged files renamed into
 * place, a partition directory swapped) only after it is durable. Every writer that takes the
 * publish lock first finishes publishing what a crashed one committed (`_applied` says how far),
 * so kill -9 at any moment leaves each committed row in exactly one visible file. A snapshot of
 * the whole state every `snapshotEvery` versions keeps opening cheap.
 *
 * Readers that list files (DuckDB, pyarrow, Polars, Spark) need none of this: the files on disk
 * are the dataset. The log is what a restart, a takeover and compaction read instead of every file.
 */
export class DatasetLog {
  readonly logDir: string;
  readonly #now: () => number;
  readonly #options: DatasetLogOptions;
  #version = 0;
  readonly #files = new Map<string, LogFile>();
  readonly #series = new Map<string, SeriesWatermark>();

  private constructor(
    readonly root: string,
    readonly dataset: DatasetKind,
    options: DatasetLogOptions,
  ) {
    this.logDir = join(root, DATASET_LOG_DIR, dataset);
    this.#now = options.now ?? Date.now;
    this.#options = options;
  }

  /** Reads the log of `dataset` under `root` (an empty log where none exists yet). */
  static async open(
    root: string,
    dataset: DatasetKind,
    options: DatasetLogOptions = {},
  ): Promise<DatasetLog> {
    const log = new DatasetLog(root, dataset, options);
    await log.refresh();
    return log;
  }

  /** The newest version read (0: nothing committed). */
  get version(): number {
    return this.#version;
  }

  /** The live files, by path relative to the root. */
  get files(): ReadonlyMap<string, LogFile> {
    return this.#files;
  }

  /** Per series (core's `seriesKey`), what the dataset holds. */
  get series(): ReadonlyMap<string, SeriesWatermark> {
    return this.#series;
  }

  /** Reads versions committed since the last read (by any process); returns them in order. */
  async refresh(): Promise<LogEntry[]> {
    const names = await readdir(this.logDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw err;
    });
    const versions = new Set<number>();
    let newestSnapshot = -1;
    for (const name of names) {
      const parsed = parseLogFileName(name);
      if (parsed === undefined) continue;
      if (parsed.snapshot) newestSnapshot = Math.max(newestSnapshot, parsed.version);
      else versions.add(parsed.version);
    }
    // Entries this process has not read were pruned: start again from the newest snapshot.
    if (!versions.has(this.#version + 1) && newestSnapshot > this.#version) {
      this.load(await this.readSnapshot(newestSnapshot));
    }
    const read: LogEntry[] = [];
    while (versions.has(this.#version + 1)) {
      const entry = await this.readEntry(this.#version + 1);
      this.fold(entry);
      read.push(entry);
    }
    return read;
  }

  /**
   * Runs `body` holding the dataset's publish lock, with the log current and everything committed
   * published (a crashed writer's commit included). With `adoptOrphans`, files on disk that no
   * commit names are first committed as `adopt` (read with `summarize`).
   */
  async transaction<T>(
    body: (tx: DatasetTransaction) => Promise<T>,
    options: { adoptOrphans?: boolean } = {},
  ): Promise<T> {
    await makeDirectory(this.logDir);
    // Orphans are read before the lock (a first start on a large dataset reads many files, longer
    // than the lock may be held); only those that appear meanwhile are read holding it.
    let summaries: Map<string, FileSummary> | undefined;
    if (options.adoptOrphans === true) await this.summarizeOrphans((summaries = new Map()));
    const lock = await acquirePublishLock(join(this.logDir, '.lock'), {
      ...this.#options.lock,
      now: this.#options.lock?.now ?? this.#now,
    });
    try {
      await this.refresh();
      await this.publishCommitted();
      const tx: DatasetTransaction = { commit: (change) => this.commit(change) };
      if (summaries !== undefined) await this.adoptOrphans(tx, summaries);
      return await body(tx);
    } finally {
      await lock.release();
    }
  }

  private async commit(change: LogChange): Promise<LogEntry> {
    const entry: LogEntry = {
      version: this.#version + 1,
      committedAt: new Date(this.#now()).toISOString(),
      writer: WRITER,
      operation: change.operation,
      add: change.add,
      remove: change.remove ?? [],
      ...(change.series === undefined ? {} : { series: change.series }),
      ...(change.swap === undefined ? {} : { swap: change.swap }),
    };
    try {
      await writeFileDurably(join(this.logDir, versionFileName(entry.version)), JSON.stringify(entry), {
        exclusive: true,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      throw new FileSinkError(
        'QF_LOCKED',
        `${this.dataset} commit log: version ${entry.version} was committed by another writer while this one held the publish lock (the lock was broken as stale): nothing of this commit was published`,
      );
    }
    this.fold(entry);
    await applyLogEntry(this.root, entry);
    await this.markApplied(entry.version);
    return entry;
  }

  /** Publishes versions committed but not yet published (their writer died in between). */
  private async publishCommitted(): Promise<void> {
    const applied = await this.readApplied();
    if (applied >= this.#version) return;
    for (let v = applied + 1; v <= this.#version; v++) {
      const entry = await this.readEntry(v).catch(() => undefined);
      if (entry !== undefined) await applyLogEntry(this.root, entry);
    }
    await this.markApplied(this.#version);
  }

  /**
   * Reads every file on disk that no commit names (and `known` does not hold yet); returns those
   * paths. Outside the lock, a file listed here may be gone by the time the lock is held (a
   * compaction a killed writer committed is published first), so the adoption lists again.
   */
  private async summarizeOrphans(known: Map<string, FileSummary>): Promise<string[]> {
    await this.refresh();
    const orphans: string[] = [];
    for (const path of await listDataFiles(this.root, this.dataset)) {
      if (this.#files.has(path)) continue;
      orphans.push(path);
      if (!known.has(path)) known.set(path, (await this.#options.summarize?.(path)) ?? { rows: -1 });
    }
    return orphans;
  }

  /** Commits the files on disk now (holding the lock, published) that no commit names. */
  private async adoptOrphans(tx: DatasetTransaction, summaries: Map<string, FileSummary>): Promise<void> {
    const add: LogFile[] = [];
    const series = new Map<string, SeriesWatermark>();
    for (const path of await this.summarizeOrphans(summaries)) {
      const summary = summaries.get(path)!;
      add.push({ path, rows: summary.rows, bytes: 0 });
      for (const [key, w] of Object.entries(summary.series ?? {}))
        series.set(key, addWatermark(series.get(key), w));
    }
    if (add.length === 0) return;
    await tx.commit({ operation: 'adopt', add, series: Object.fromEntries(series) });
  }

  private fold(entry: LogEntry): void {
    for (const path of entry.remove) this.#files.delete(path);
    for (const f of entry.add) this.#files.set(f.path, { path: f.path, rows: f.rows, bytes: f.bytes });
    for (const [raw, w] of Object.entries(entry.series ?? {})) {
      const key = normalizeSeriesKey(raw);
      this.#series.set(key, addWatermark(this.#series.get(key), w));
    }
    this.#version = entry.version;
  }

  private load(snapshot: LogSnapshot): void {
    this.#files.clear();
    this.#series.clear();
    for (const f of snapshot.files) this.#files.set(f.path, f);
    for (const [key, w] of Object.entries(snapshot.series)) this.#series.set(normalizeSeriesKey(key), w);
    this.#version = snapshot.version;
  }

  private async markApplied(version: number): Promise<void> {
    await writeFileDurably(join(this.logDir, '_applied'), `${version}\n`);
    const every = this.#options.snapshotEvery ?? 100;
    if (version % every === 0 && version === this.#version) await this.writeSnapshot(every);
  }

  /** Writes the state as a snapshot, then prunes what the previous snapshot already covers. */
  private async writeSnapshot(every: number): Promise<void> {
    const snapshot: LogSnapshot = {
      version: this.#version,
      files: [...this.#files.values()],
      series: Object.fromEntries(this.#series),
    };
    await writeFileDurably(join(this.logDir, snapshotFileName(snapshot.version)), JSON.stringify(snapshot));
    const keepFrom = snapshot.version - every;
    for (const name of await readdir(this.logDir)) {
      const parsed = parseLogFileName(name);
      if (parsed !== undefined && parsed.version < keepFrom)
        await rm(join(this.logDir, name), { force: true });
    }
  }

  private async readApplied(): Promise<number> {
    try {
      const n = Number((await readFile(join(this.logDir, '_applied'), 'utf8')).trim());
      return Number.isInteger(n) && n >= 0 ? n : 0;
    } catch {
      return 0;
    }
  }

  private async readEntry(version: number): Promise<LogEntry> {
    return this.readJson(versionFileName(version), (v) => LogEntrySchema.parse(v) as LogEntry);
  }

  private async readSnapshot(version: number): Promise<LogSnapshot> {
    return this.readJson(snapshotFileName(version), (v) => LogSnapshotSchema.parse(v) as LogSnapshot);
  }

  private async readJson<T>(name: string, parse: (v: unknown) => T): Promise<T> {
    const path = join(this.logDir, name);
    try {
      return parse(JSON.parse(await readFile(path, 'utf8')));
    } catch (err) {
      throw new FileSinkError(
        'QF_DATASET_LOG',
        `${path} is not a quoteflow commit: ${(err as Error).message.slice(0, 200)}`,
        {
          cause: err,
        },
      );
    }
  }
}

/** Every finished data file of a dataset on disk (`DIR/<dataset>/…`), relative to `DIR`, sorted. */
export async function listDataFiles(root: string, dataset: DatasetKind): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (/\.(parquet|arrow|ndjson)$/.test(e.name)) out.push(relative(root, p).split(sep).join('/'));
    }
  };
  await walk(join(root, dataset));
  return out.sort();
}
