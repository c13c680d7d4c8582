import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { makeDirectory, monotonicClock, writeFileDurably } from '@quoteflow/core/internal';
import type { DatasetKind } from './dataset-columns.js';
import {
  addWatermark,
  normalizeSeriesKey,
  type LogEntry,
  type LogFile,
  type SeriesWatermark,
} from './dataset-log-format.js';
import type { DeltaAction } from './delta/delta-actions.js';
import { checkTableFormat } from './delta/table-format.js';
import { DeltaState } from './delta/delta-state.js';
import { readLegacyLog, removeLegacyLog } from './delta/legacy-log.js';
import { FileSinkError } from './file-sink-error.js';
import { applyLogEntry } from './internal/apply-log-entry.js';
import { acquirePublishLock } from './internal/publish-lock.js';
import { LocalStore } from './storage/local-store.js';
import type { ObjectStore } from './storage/object-store.js';
import { checkWrites } from './internal/claim-actions.js';
import type { DatasetLogOptions, DatasetTransaction, FileSummary, LogChange } from './dataset-log-options.js';
import { claimSeries, releaseSeries, renewClaims } from './table-claims.js';
import { TABLE_WRITER_DEFAULTS, type TableClaimOptions, type TableWriter } from './table-writer.js';
import { requirePackagesOf } from '../internal/optional-packages.js';
import type * as DeltaCheckpoint from './delta/delta-checkpoint.js';
import { changeActions, stateActions } from './delta/change-actions.js';

/** The Delta log of a dataset: `DIR/<dataset>/_delta_log/`. */
export const DATASET_LOG_DIR = '_delta_log';

const WRITER = `${hostname().replaceAll('~', '_')}~${process.pid}~${randomBytes(4).toString('hex')}`;
let logs = 0;
/** Versions read whose series a remote commit checks against (see `LogChange.since`), at most. */
const HISTORY = 10_000;
const COMMIT_NAME = /^(\d{20})\.json$/;
/** Delta's `commitInfo.operation` of quoteflow's operations (other than `compact`). */
const LAST_CHECKPOINT = '_last_checkpoint';
const COMPACTION_NAME = /^0{20}\.(\d{20})\.compacted\.json$/;
const CHECKPOINT_NAME = /^(\d{20})\.checkpoint\.parquet$/;
/** Delta's default `deletedFileRetentionDuration`. */
const TOMBSTONE_RETENTION_MS = 7 * 86_400_000;
const APPLIED = '.quoteflow-applied';
/** A local refresh further behind than this many commits lists the log (see `#nextLocalCommits`). */
const PROBED_COMMITS_AT_MOST = 64;

/** What a listing of the log found: commits, log compactions and Delta checkpoints, by version. */
interface ListedLog {
  readonly commits: Set<number>;
  readonly compactions: number[];
  readonly checkpoints: number[];
}

const versionName = (v: number): string => `${String(v).padStart(20, '0')}.json`;
/** Every log compaction's name starts so (and sorts before every commit's). */
const COMPACTION_PREFIX = `${'0'.repeat(20)}.`;
const compactionName = (v: number): string =>
  `${COMPACTION_PREFIX}${String(v).padStart(20, '0')}.compacted.json`;

/**
 * The commit log of one dataset: a Delta Lake table's log, `DIR/<dataset>/_delta_log/`, read by
 * delta-rs, Polars, Spark and the others. Version `n` is the file `<n>.json` (newline-delimited
 * actions: `commitInfo`, `protocol` and `metaData` in the first, `add`/`remove` with partition
 * values, size and statistics), created with `link()` (which fails if it exists), so of two writers
 * at most one commits each version. What Delta has no action for rides in its extension points:
 * per-series watermarks in `domainMetadata` (`quoteflow.series.<CODE|K>`, the totals), files of
 * other formats than Parquet likewise (`quoteflow.file.<path>`), and in `commitInfo.quoteflow`
 * what a version does locally: the staged files a checkpoint publishes, the partition a compaction
 * swaps, what each series gained. A commit is published (staged files renamed into place, a
 * partition directory swapped) only after it is durable; every writer that takes the publish lock
 * first finishes publishing what a crashed one committed (`.quoteflow-applied` says how far), so
 * kill -9 at any moment leaves each committed row in exactly one visible file. Every
 * `snapshotEvery` versions the whole state is written as a Delta log compaction
 * (`0…0.<v>.compacted.json`), so opening reads one file and the versions after it. A dataset with
 * a pre-Delta log (`DIR/_quoteflow_log/<dataset>/`) is converted into version 0 on first open.
 *
 * Readers that list files (DuckDB, pyarrow, Polars, Spark over `DIR/kline`) need none of this:
 * the files on disk are the current version. The log is what a restart, a takeover, compaction
 * and the Delta readers read instead.
 */
export class DatasetLog {
  readonly logDir: string;
  /** Where the table lives (the local directory or `s3://…`). */
  readonly store: ObjectStore;
  readonly #now: () => number;
  readonly #options: DatasetLogOptions;
  /** Keys of the log, relative to the store's root: `<dataset>/_delta_log/`. */
  readonly #logKey: string;
  /** This instance as a committer (`host~pid~id~n`): its own commits never conflict with it. */
  readonly #writer = `${WRITER}~${++logs}`;
  /** The newest versions read: who committed which series. */
  #history: { version: number; writer: string; series: string[] }[] = [];
  #state: DeltaState;
  /** Series this writer claimed and did not release (owned, or taken over by another since). */
  readonly #claimed = new Set<string>();
  /** When this writer's record was last written (monotonic ms). */
  #renewedAtMs = -Infinity;

  private constructor(
    readonly root: string,
    readonly dataset: DatasetKind,
    options: DatasetLogOptions,
  ) {
    this.logDir = join(root, dataset, DATASET_LOG_DIR);
    this.store = options.store ?? new LocalStore(root);
    this.#logKey = `${dataset}/${DATASET_LOG_DIR}/`;
    this.#now = options.now ?? Date.now;
    this.#options = options;
    this.#state = new DeltaState(dataset, this.remote);
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

  /** The newest Delta version read (-1: the table has no version yet). */
  get version(): number {
    return this.#state.version;
  }

  /** The live files, by path relative to the root. */
  get files(): ReadonlyMap<string, LogFile> {
    return this.#state.files;
  }

  /**
   * Files removed (by a compaction) and not added again, with their removal time (epoch ms): on
   * object storage, where vacuum deletes them after the retention; a local log keeps none.
   */
  get removed(): ReadonlyMap<string, number> {
    return new Map([...this.#state.tombstones].map(([path, r]) => [path, r.deletionTimestamp]));
  }

  /** Per series (core's `seriesKey`), what the dataset holds. */
  get series(): ReadonlyMap<string, SeriesWatermark> {
    return this.#state.series;
  }

  /** The table in messages: its directory, or `s3://bucket/prefix/<dataset>`. */
  get table(): string {
    return this.remote ? `${this.store.location}/${this.dataset}` : join(this.root, this.dataset);
  }

  /** This log as a writer (`host~pid~id~n`): its commits and claims name it. */
  get writerId(): string {
    return this.#writer;
  }

  /** Per claimed series, the id of the writer that owns it. */
  get owners(): ReadonlyMap<string, string> {
    return this.#state.owners;
  }

  /** The writers holding claims, by id (host, pid, since when, lease, renewals). */
  get writers(): ReadonlyMap<string, TableWriter> {
    return this.#state.writers;
  }

  /** Series this writer claimed and did not release (some may have been taken over since). */
  get claimed(): ReadonlySet<string> {
    return this.#claimed;
  }

  /** This writer's lease (ms). */
  get leaseMs(): number {
    return this.#options.leaseMs ?? TABLE_WRITER_DEFAULTS.leaseMs;
  }

  /**
   * Claims `series` for this writer in a commit of its own, before it commits their rows: another
   * writer that meets the claims (at its own claim, or at each of its commits) is refused while
   * this one lives. See `ifOwned` for a series another live writer owns; a writer on the same
   * machine lives while its process does, one elsewhere until its lease runs out unrenewed.
   */
  claim(series: readonly string[], options: TableClaimOptions = {}): Promise<void> {
    return claimSeries(this, series, options);
  }

  /** Gives up this writer's claims of `series` (without: all, and its writer record): a clean stop. */
  release(series?: readonly string[]): Promise<void> {
    return releaseSeries(this, series);
  }

  /** Renews this writer's claims in a small commit when none of its commits did for a third of its lease. */
  renew(): Promise<void> {
    return renewClaims(this);
  }

  /** Whether this writer holds claims that no commit renewed for a third of its lease. */
  renewalDue(nowMs = monotonicClock.now()): boolean {
    return this.#state.writers.has(this.#writer) && nowMs - this.#renewedAtMs >= this.leaseMs / 3;
  }

  /** Whether the table is on object storage (no publish lock, no renames: the commit is all). */
  get remote(): boolean {
    return this.store.kind !== 'local';
  }

  /** Reads versions committed since the last read (by any process); returns them. */
  async refresh(): Promise<LogEntry[]> {
    const read: LogEntry[] = [];
    const { commits, compactions, checkpoints } = await this.#listNew();
    const held = this.#state.version;
    const newest = compactions.filter((v) => commits.has(v) || v <= held).at(-1) ?? -1;
    // A first read, or a log whose commits after the version held expired (table upkeep bounds
    // it), starts from the newest Delta checkpoint, as any Delta reader does. Otherwise the
    // commits are read one by one: each says who committed which series (`LogChange.since`).
    const checkpoint = checkpoints.filter((v) => commits.has(v) || commits.has(v + 1)).at(-1) ?? -1;
    const expired = held >= 0 && !commits.has(held + 1) && [...commits].some((v) => v > held);
    const fromCheckpoint = (held < 0 || expired) && checkpoint > Math.max(newest, held);
    if (fromCheckpoint || newest > held + 1) {
      const state = new DeltaState(this.dataset, this.remote);
      if (fromCheckpoint) {
        const { checkpointName, readCheckpointParquet } = await checkpointCodec();
        state.fold(checkpoint, readCheckpointParquet(await this.#readObject(checkpointName(checkpoint))));
      } else state.fold(newest, await this.#readActions(compactionName(newest)));
      this.#state = state;
    }
    while (commits.has(this.#state.version + 1)) {
      const v = this.#state.version + 1;
      read.push(this.#state.fold(v, await this.#readActions(versionName(v))));
    }
    // A table of a newer quoteflow format is refused before this release reads on or writes to it.
    checkTableFormat(this.#state.metaData, `the ${this.dataset} table at ${this.store.location}`);
    for (const e of read)
      this.#history.push({
        version: e.version,
        writer: e.writer,
        series: Object.keys(e.series ?? {}).map(normalizeSeriesKey),
      });
    if (this.#history.length > HISTORY) this.#history = this.#history.slice(-HISTORY);
    return read;
  }

  /**
   * The versions a refresh may read. On object storage a table's log only grows (a LIST returns
   * 1,000 keys a request, and a day of 1-minute commits is 1,440), so it lists only what is new:
   * after the version held, or on a first read from the newest log compaction on (the compactions
   * sort before every commit, and all but the newest two are deleted). Locally a log already read
   * is not listed (see {@link #nextLocalCommits}).
   */
  async #listNew(): Promise<ListedLog> {
    if (!this.remote) return (await this.#nextLocalCommits()) ?? this.#list();
    if (this.#state.version >= 0) return this.#list(versionName(this.#state.version));
    const compactions = await this.#listCompactions();
    const newest = compactions.at(-1);
    if (newest === undefined || newest === 0) return this.#list();
    const listed = await this.#list(versionName(newest - 1));
    // A compaction without its commit (never written by quoteflow) is no starting point.
    return listed.commits.has(newest) ? { ...listed, compactions } : this.#list();
  }

  /**
   * The commits after the version held, found by name: a directory listing grows with the log's
   * retention and a writer refreshes at every checkpoint (its upkeep and claims too), so listing
   * made each checkpoint cost in proportion to the log's length. Undefined when the directory must
   * be listed: a first read, or the commit after the version held is gone while a newer Delta
   * checkpoint exists (log retention expired it: the refresh starts from that checkpoint), or more
   * than {@link PROBED_COMMITS_AT_MOST} commits came meanwhile (a log compaction is nearer).
   */
  async #nextLocalCommits(): Promise<ListedLog | undefined> {
    const held = this.#state.version;
    if (held < 0) return undefined;
    const commits = new Set<number>();
    const exists = (v: number) =>
      stat(join(this.logDir, versionName(v))).then(
        () => true,
        () => false,
      );
    for (let v = held + 1; await exists(v); v++) {
      // Far behind: the listing finds a log compaction to start from instead.
      if (commits.size === PROBED_COMMITS_AT_MOST) return undefined;
      commits.add(v);
    }
    if (commits.size === 0) {
      const pointer = await this.store.read(this.#logKey + LAST_CHECKPOINT).catch(() => undefined);
      if (pointer !== undefined && lastCheckpointVersion(pointer) > held) return undefined;
    }
    return { commits, compactions: [], checkpoints: [] };
  }

  async #listCompactions(): Promise<number[]> {
    const objects = await this.store.list(this.#logKey + COMPACTION_PREFIX);
    const versions: number[] = [];
    for (const { key } of objects) {
      const k = COMPACTION_NAME.exec(key.slice(this.#logKey.length));
      if (k !== null) versions.push(Number(k[1]));
    }
    return versions.sort((a, b) => a - b);
  }

  async #list(startAfter?: string): Promise<ListedLog> {
    const objects = await this.store.list(
      this.#logKey,
      startAfter === undefined ? undefined : this.#logKey + startAfter,
    );
    const commits = new Set<number>();
    const compactions: number[] = [];
    const checkpoints: number[] = [];
    for (const { key } of objects) {
      const name = key.slice(this.#logKey.length);
      const c = COMMIT_NAME.exec(name);
      if (c !== null) commits.add(Number(c[1]));
      const k = COMPACTION_NAME.exec(name);
      if (k !== null) compactions.push(Number(k[1]));
      const p = CHECKPOINT_NAME.exec(name);
      if (p !== null) checkpoints.push(Number(p[1]));
    }
    const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
    return { commits, compactions: sorted(compactions), checkpoints: sorted(checkpoints) };
  }

  /**
   * Runs `body` holding the dataset's publish lock, with the log current and everything committed
   * published (a crashed writer's commit included; a pre-Delta log converted). With
   * `adoptOrphans`, files on disk that no commit names are first committed as `adopt` (read with
   * `summarize`).
   */
  async transaction<T>(
    body: (tx: DatasetTransaction) => Promise<T>,
    options: { adoptOrphans?: boolean } = {},
  ): Promise<T> {
    if (this.remote) {
      // Object storage: nothing to publish after a commit, so no lock; each commit is a
      // conditional PUT of its version, and a version taken meanwhile is decided in `commit`.
      await this.refresh();
      return await body({ commit: (change) => this.commit(change) });
    }
    await makeDirectory(this.logDir);
    // Orphans are read before the lock (a first start on a large dataset reads many files, longer
    // than the lock may be held); only those that appear meanwhile are read holding it.
    let summaries: Map<string, FileSummary> | undefined;
    if (options.adoptOrphans === true) await this.summarizeOrphans((summaries = new Map()));
    const lock = await acquirePublishLock(join(this.logDir, '.quoteflow.lock'), {
      ...this.#options.lock,
      now: this.#options.lock?.now ?? this.#now,
    });
    try {
      await this.refresh();
      await this.publishCommitted();
      await this.convertLegacy();
      const tx: DatasetTransaction = { commit: (change) => this.commit(change) };
      if (summaries !== undefined) await this.adoptOrphans(tx, summaries);
      return await body(tx);
    } finally {
      await lock.release();
    }
  }

  private async commit(change: LogChange): Promise<LogEntry> {
    if (this.remote) return this.#commitRemote(change);
    // Holding the lock, the log current: no commit can land between these checks and this one.
    this.#checkConflicts(change, change.since ?? this.#state.version);
    const version = this.#state.version + 1;
    const actions = await this.#actionsOf(change, version);
    const text = actions.map((a) => JSON.stringify(a)).join('\n') + '\n';
    try {
      await writeFileDurably(join(this.logDir, versionName(version)), text, { exclusive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      throw new FileSinkError(
        'QF_LOCKED',
        `${this.dataset} commit log: version ${version} was committed by another writer while this one held the publish lock (the lock was broken as stale): nothing of this commit was published`,
      );
    }
    const entry = this.#state.fold(version, actions as unknown as Record<string, unknown>[]);
    this.#afterClaims(change);
    await applyLogEntry(this.root, entry);
    await this.markApplied(version);
    return entry;
  }

  /**
   * On object storage: uploads the staged files to their final keys (unique names: no reader of
   * the table sees them before the commit names them), then creates the next version with a
   * conditional PUT. Taken (412): the versions committed meanwhile are read; if one of them is
   * another writer's commit of a series this one commits (a worker that took over the series of a
   * paused one) the commit is refused (`QF_FENCED`), if one removed a file this one removes (two
   * compactions) it is void (`QF_CONFLICT`); otherwise it is retried as the next version, as Delta's
   * blind appends are. Files of a refused commit are deleted; those of a PUT that failed without an
   * answer stay (it may have landed), as do a killed writer's: `vacuumDataset` deletes what no
   * version names.
   */
  async #commitRemote(change: LogChange): Promise<LogEntry> {
    const uploaded: string[] = [];
    const since = change.since ?? this.#state.version;
    // From the PUT on, until it is known to have been refused, the version may be ours: the
    // uploaded files must then stay (an error of the PUT may hide a commit that landed).
    let mayBeCommitted = false;
    try {
      this.#checkConflicts(change, since);
      for (const f of change.add) {
        if (f.staged === undefined) continue;
        await this.store.upload(f.path, join(this.root, f.staged));
        uploaded.push(f.path);
      }
      for (;;) {
        const version = this.#state.version + 1;
        const actions = await this.#actionsOf(change, version);
        const text = actions.map((a) => JSON.stringify(a)).join('\n') + '\n';
        const key = this.#logKey + versionName(version);
        if (change.fence !== undefined && !change.fence())
          throw new FileSinkError(
            'QF_FENCED',
            `${this.dataset} table at ${this.store.location}: not committed: this writer may no longer write its series (its lease lapsed)`,
          );
        mayBeCommitted = true;
        if (await this.store.createExclusive(key, text)) {
          const entry = this.#state.fold(version, actions as unknown as Record<string, unknown>[]);
          await this.#afterRemoteCommit(change, version);
          return entry;
        }
        // An answer lost after the PUT succeeded comes back as 412 on a retry: the version is ours.
        const there = await this.store.read(key);
        if (there !== undefined && Buffer.from(there).toString('utf8') === text) {
          const entry = this.#state.fold(version, actions as unknown as Record<string, unknown>[]);
          await this.#afterRemoteCommit(change, version);
          return entry;
        }
        mayBeCommitted = false;
        await this.refresh();
        this.#checkConflicts(change, since);
      }
    } catch (err) {
      if (!mayBeCommitted) await this.store.delete(uploaded).catch(() => undefined);
      throw err;
    }
  }

  async #afterRemoteCommit(change: LogChange, version: number): Promise<void> {
    this.#afterClaims(change);
    for (const f of change.add)
      if (f.staged !== undefined) await rm(join(this.root, f.staged), { force: true });
    const every = this.#options.snapshotEvery ?? 100;
    if (version === 0 || version % every !== 0) return;
    const lines = this.#stateActions();
    await this.writeCompaction(every, lines);
    await this.#writeCheckpoint(lines);
  }

  /** This writer's claims after a commit of `change` landed. */
  #afterClaims(change: LogChange): void {
    for (const s of change.claim ?? []) this.#claimed.add(s);
    if (change.release === 'all') this.#claimed.clear();
    else for (const s of change.release ?? []) this.#claimed.delete(s);
    if (this.#state.writers.has(this.#writer)) this.#renewedAtMs = monotonicClock.now();
  }

  /** Refuses a commit that versions committed since it was prepared make wrong. */
  #checkConflicts(change: LogChange, since: number): void {
    change.precondition?.();
    checkWrites(this, change, this.#claimed);
    const ours = new Set(Object.keys(change.series ?? {}).map(normalizeSeriesKey));
    for (const entry of this.#history) {
      if (entry.version <= since || entry.writer === this.#writer) continue;
      const taken = entry.series.filter((k) => ours.has(k));
      if (taken.length > 0)
        throw new FileSinkError(
          'QF_FENCED',
          `${this.dataset} table at ${this.store.location}: version ${entry.version} by ${entry.writer} committed ${taken.slice(0, 3).join(', ')}${taken.length > 3 ? ', …' : ''}, which this writer was committing: another worker writes these series now; nothing of this commit is in the table`,
        );
    }
    const gone = (change.remove ?? []).filter((p) => !this.#state.files.has(p));
    if (gone.length > 0)
      throw new FileSinkError(
        'QF_CONFLICT',
        `${this.dataset} table at ${this.store.location}: ${gone[0]} was removed by a newer version: this ${change.operation} is void`,
      );
  }

  /** The Delta actions of a change committed as `version` now, by this writer. */
  #actionsOf(change: LogChange, version: number): Promise<DeltaAction[]> {
    return changeActions(this, change, version, {
      state: this.#state,
      writer: this.#writer,
      nowMs: this.#now(),
      command: this.#options.command,
    });
  }

  /** Publishes versions committed but not yet published (their writer died in between). */
  private async publishCommitted(): Promise<void> {
    const applied = await this.readApplied();
    if (applied >= this.#state.version) return;
    for (let v = applied + 1; v <= this.#state.version; v++) {
      const entry = new DeltaState(this.dataset).fold(v, await this.#readActions(versionName(v)));
      await applyLogEntry(this.root, entry);
    }
    await this.markApplied(this.#state.version);
  }

  /** A dataset with a pre-Delta log and no Delta version yet: its state becomes version 0, once. */
  private async convertLegacy(): Promise<void> {
    const legacy = await readLegacyLog(this.root, this.dataset);
    if (legacy === undefined) return;
    if (this.#state.version < 0 && (legacy.files.length > 0 || legacy.series.size > 0)) {
      // Sizes from the files: the pre-Delta log recorded 0 bytes for the files it adopted.
      const add: LogFile[] = [];
      for (const f of legacy.files) add.push({ ...f, bytes: await fileSize(join(this.root, f.path)) });
      await this.commit({
        operation: 'convert',
        add,
        series: Object.fromEntries(legacy.series),
      });
    }
    await removeLegacyLog(this.root, this.dataset);
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
      if (this.#state.files.has(path)) continue;
      orphans.push(path);
      if (!known.has(path)) known.set(path, (await this.#options.summarize?.(path)) ?? { rows: -1 });
    }
    return orphans;
  }

  /** Commits the files on disk now (holding the lock, published) that no commit names. */
  private async adoptOrphans(tx: DatasetTransaction, summaries: Map<string, FileSummary>): Promise<void> {
    // A dataset with a pre-Delta log names its files there: they are converted, not adopted.
    const add: LogFile[] = [];
    const series = new Map<string, SeriesWatermark>();
    for (const path of await this.summarizeOrphans(summaries)) {
      const summary = summaries.get(path)!;
      add.push({ path, rows: summary.rows, bytes: await fileSize(join(this.root, path)) });
      for (const [key, w] of Object.entries(summary.series ?? {}))
        series.set(key, addWatermark(series.get(key), w));
    }
    if (add.length === 0) return;
    await tx.commit({ operation: 'adopt', add, series: Object.fromEntries(series) });
  }

  private async markApplied(version: number): Promise<void> {
    await writeFileDurably(join(this.logDir, APPLIED), `${version}\n`);
    const every = this.#options.snapshotEvery ?? 100;
    if (version > 0 && version % every === 0 && version === this.#state.version)
      await this.writeCompaction(every);
  }

  /** The whole state as Delta actions (tombstones past their retention forgotten first). */
  #stateActions(): DeltaAction[] {
    this.#state.expireTombstones(
      this.#now() - (this.#options.tombstoneRetentionMs ?? TOMBSTONE_RETENTION_MS),
    );
    return stateActions(this.#state, this.remote);
  }

  /** Writes the whole state as a Delta log compaction of versions 0..v; drops all but the previous one. */
  private async writeCompaction(every: number, lines = this.#stateActions()): Promise<void> {
    const s = this.#state;
    const text = lines.map((a) => JSON.stringify(a)).join('\n') + '\n';
    await this.store.write(this.#logKey + compactionName(s.version), text);
    const old = (await this.#listCompactions()).filter((v) => v < s.version - every);
    await this.store.delete(old.map((v) => this.#logKey + compactionName(v)));
  }

  /**
   * Writes the state of the version read as a Delta classic checkpoint (`<v>.checkpoint.parquet`,
   * locally too), then `_last_checkpoint` unless that names a newer one, as Delta writers do every
   * `checkpointInterval` versions: readers (delta-rs, Polars, DuckDB, Spark) start from it instead
   * of reading every commit, and commits before it may expire (table upkeep). Idempotent: a
   * checkpoint of a version is the same whoever writes it. Resolves with the version.
   */
  async checkpoint(): Promise<number> {
    const version = this.#state.version;
    if (version < 0)
      throw new FileSinkError('QF_DATASET_LOG', `${this.dataset} table: no version to checkpoint`);
    await this.#putCheckpoint(version, this.#stateActions());
    return version;
  }

  /** The checkpoint of `version`, then the pointer to it unless that already names a newer one. */
  async #putCheckpoint(version: number, lines: readonly DeltaAction[]): Promise<void> {
    const { checkpointName, checkpointParquet, lastCheckpoint } = await checkpointCodec();
    const bytes = checkpointParquet(lines);
    await this.store.write(this.#logKey + checkpointName(version), bytes);
    const held = await this.store.read(this.#logKey + LAST_CHECKPOINT).catch(() => undefined);
    const heldVersion = held === undefined ? -1 : lastCheckpointVersion(held);
    if (heldVersion < version)
      await this.store.write(this.#logKey + LAST_CHECKPOINT, lastCheckpoint(version, lines, bytes.length));
  }

  /**
   * On object storage: writes the state as a Delta classic checkpoint
   * (`<v>.checkpoint.parquet`), then `_last_checkpoint` pointing at it, for the readers that do
   * not read log compactions (delta-rs, Polars, DuckDB). Derived data: each is one whole PUT,
   * the checkpoint before the pointer, and a failure leaves the commits (and any older
   * checkpoint) as they were, so it is reported to `onCheckpointError` and the commit stands.
   */
  async #writeCheckpoint(lines: readonly DeltaAction[]): Promise<void> {
    const version = this.#state.version;
    try {
      await this.#putCheckpoint(version, lines);
    } catch (err) {
      const error = new FileSinkError(
        'QF_DATASET_LOG',
        `${this.dataset} table at ${this.store.location}: the Delta checkpoint of version ${version} could not be written (the version is committed; readers read the commits): ${(err as Error).message}`,
        { cause: err },
      );
      (this.#options.onCheckpointError ?? ((e: Error) => process.emitWarning(e)))(error);
    }
  }

  private async readApplied(): Promise<number> {
    try {
      const n = Number((await readFile(join(this.logDir, APPLIED), 'utf8')).trim());
      return Number.isInteger(n) && n >= -1 ? n : -1;
    } catch {
      return -1;
    }
  }

  /** A file of the log, by name; a failure names it. */
  async #readObject(name: string): Promise<Uint8Array> {
    const path = this.remote ? `${this.store.location}/${this.#logKey}${name}` : join(this.logDir, name);
    let bytes: Uint8Array | undefined;
    try {
      bytes = await this.store.read(this.#logKey + name);
    } catch (err) {
      throw new FileSinkError('QF_DATASET_LOG', `${path} could not be read: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (bytes === undefined)
      throw new FileSinkError('QF_DATASET_LOG', `${path} could not be read: it is gone`);
    return bytes;
  }

  async #readActions(name: string): Promise<Record<string, unknown>[]> {
    const bytes = await this.#readObject(name);
    const path = this.remote ? `${this.store.location}/${this.#logKey}${name}` : join(this.logDir, name);
    try {
      const text = Buffer.from(bytes).toString('utf8');
      return text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    } catch (err) {
      throw new FileSinkError(
        'QF_DATASET_LOG',
        `${path} is not a Delta commit: ${(err as Error).message.slice(0, 200)}`,
        { cause: err },
      );
    }
  }
}

/** The Delta checkpoint's Parquet codec, loaded on first use (apache-arrow and parquet-wasm are optional peers). */
async function checkpointCodec(): Promise<typeof DeltaCheckpoint> {
  requirePackagesOf('datasets');
  return import('./delta/delta-checkpoint.js');
}

/** The version `_last_checkpoint` names (-1 when unreadable). */
function lastCheckpointVersion(bytes: Uint8Array): number {
  try {
    const v = (JSON.parse(Buffer.from(bytes).toString('utf8')) as { version?: unknown }).version;
    return typeof v === 'number' && Number.isInteger(v) ? v : -1;
  } catch {
    return -1;
  }
}

async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
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
      if (e.isDirectory()) {
        if (e.name !== DATASET_LOG_DIR) await walk(p);
      } else if (/\.(parquet|arrow|ndjson)$/.test(e.name)) out.push(relative(root, p).split(sep).join('/'));
    }
  };
  await walk(join(root, dataset));
  return out.sort();
}
