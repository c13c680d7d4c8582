import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { seriesKey, systemClock, type Clock } from '@quoteflow/core';
import { monotonicClock } from '@quoteflow/core/internal';
import { join, relative, resolve, sep } from 'node:path';
import {
  datasetKindOf,
  DatasetPartitioner,
  KLINE_SUB_PARTITIONS,
  type DatasetKind,
  type DatasetRecord,
} from './dataset-columns.js';
import { createColumnBuilder, type ColumnBuilder } from './internal/column-builders.js';
import { FileSinkError } from './file-sink-error.js';
import { EncoderPool, type EncodeHandle } from './internal/encoder-pool.js';
import {
  cleanStaging,
  newWriterId,
  partFileName,
  removeEmptyStaging,
  stagingPathFor,
} from './internal/staging.js';
import { isS3Url } from './storage/object-store.js';
import { openStore, type OpenedStore } from './storage/open-store.js';
import { DatasetLog } from './dataset-log.js';
import { addWatermark, type LogFile, type SeriesWatermark } from './dataset-log-format.js';
import type { DeltaStats } from './delta/delta-actions.js';
import { summarizeKlineFile } from './read-dataset-rows.js';
import { openWriterUpkeep, type TableUpkeep } from './table-upkeep.js';
import { checkUpkeepOptions, upkeepLogOptions, type TableUpkeepOptions } from './table-upkeep-options.js';
import { ifOwnedOf, TABLE_WRITER_DEFAULTS } from './table-writer.js';
import { requirePackagesOf } from '../internal/optional-packages.js';
import {
  DATASET_FORMATS,
  DATASET_WRITER_DEFAULTS,
  type DatasetFormat,
  type DatasetWriterOptions,
  type WrittenFile,
} from './dataset-writer-options.js';

const EXTENSIONS: Record<DatasetFormat, string> = { parquet: 'parquet', arrow: 'arrow', ndjson: 'ndjson' };

interface OpenFile {
  readonly kind: DatasetKind;
  readonly partition: string;
  readonly builder: ColumnBuilder;
  readonly openedAtMs: number;
  /** The series of its rows: kline `CODE|K` with their watermarks, a depth code, an exchange. */
  readonly series: Map<string, SeriesWatermark | undefined>;
  /** The encoder's session, once rows were handed over before the file is finished. */
  session: EncodeHandle | undefined;
  /** Rows and buffered bytes already handed to the encoder. */
  shippedRows: number;
  shippedBytes: number;
}

/**
 * A file's rows go to the encoder in pieces of this many rows (or bytes buffered) while the file
 * is still open: the encoder thread then works while this thread maps the next rows, and
 * finishing a big file leaves little to do. parquet-wasm's streaming writer encodes each piece as
 * it arrives (one row group per file up to 1 Mi rows).
 */
const SHIP_ROWS = 1 << 18;
const SHIP_BYTES = 32 * 1024 * 1024;

function positiveInt(name: string, value: number, min = 1): number {
  if (!Number.isInteger(value) || value < min) {
    throw new FileSinkError(
      'QF_INVALID_OPTION',
      `DatasetWriter: "${name}" must be an integer >= ${min}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Writes domain records (`Bar`, final `BarUpdate`, `DepthTick`, `SuspensionRecord`) into the
 * Hive-partitioned datasets under `DIR`, as Parquet (zstd), Arrow IPC or NDJSON files.
 *
 * Rows are buffered per partition; a partition's file is finished when it reaches
 * `maxRowsPerFile`, `maxBytesPerFile` or `maxFileAgeMs`, and on `flush()`/`close()`. A finished
 * file is encoded on a worker thread, written to `DIR/.staging/….tmp` and fsync'd, then committed
 * to its table's Delta log (`DIR/<dataset>/_delta_log/`) as one version, which renames it into
 * place: readers only ever see complete files, Delta readers exactly the committed ones, and kill
 * -9 between the commit and the rename is finished by the table's next writer. Files on disk that
 * no commit names (an older quoteflow's) are committed once, when a table is first opened. Stale
 * staging leftovers of crashed writers are removed on start. Bars still forming (`final: false`)
 * are ignored: files hold closed bars only.
 *
 * Like `DatasetSink`, it claims its series in each table's log before their first file
 * (`series`, else with the file), renews the claims (with its commits, and alone every third of
 * `leaseMs` while idle) and gives them up on `close()`; a second writer of the same series is
 * refused while it lives.
 *
 * @example
 * ```ts
 * await using writer = new DatasetWriter({ dir: './data' });
 * await writer.write(bars);
 * const files = await writer.flush();
 * ```
 */
export class DatasetWriter implements AsyncDisposable {
  private readonly dir: string;
  private readonly format: DatasetFormat;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly maxPending: number;
  private readonly staleMs: number;
  private readonly clock: Clock;
  private readonly onFile: ((f: WrittenFile) => void) | undefined;
  private readonly fence: (() => boolean) | undefined;
  private readonly publishOnCommit: boolean;
  private readonly onError: ((e: FileSinkError) => void) | undefined;
  private readonly pool: EncoderPool;
  private readonly partitioner: DatasetPartitioner;
  private readonly writerId = newWriterId();
  private readonly open = new Map<string, OpenFile>();
  private readonly pending = new Set<Promise<void>>();
  private readonly written: WrittenFile[] = [];
  private seq = 0;
  /** Settles when staging leftovers of crashed writers are gone; never rejects (see `cleanupError`). */
  private readonly cleaned: Promise<void>;
  /** Unless publishing on commit: the store (once open) and the tables' logs, one commit at a time. */
  private tables:
    | {
        opened: OpenedStore;
        logs: Map<DatasetKind, Promise<DatasetLog>>;
        /** Each table's upkeep, once its log is open (none when turned off). */
        upkeeps: Map<DatasetKind, TableUpkeep>;
        serial: Promise<unknown>;
      }
    | undefined;
  /** Settles when the start claims (`series`) are committed; rejects with their failure. */
  private readonly claimed: Promise<void>;
  private readonly claimOptions: DatasetWriterOptions;
  private renewTimer: unknown;
  private readonly location: string;
  private cleanupError: unknown;
  private failure: FileSinkError | undefined;
  private timer: unknown;
  private closing: Promise<void> | undefined;

  constructor(options: DatasetWriterOptions) {
    const o = { ...DATASET_WRITER_DEFAULTS, ...options };
    if (typeof o.dir !== 'string' || o.dir === '') {
      throw new FileSinkError('QF_INVALID_OPTION', 'DatasetWriter: "dir" must be a non-empty path');
    }
    if (!(DATASET_FORMATS as readonly string[]).includes(o.format)) {
      throw new FileSinkError(
        'QF_INVALID_OPTION',
        `DatasetWriter: "format" must be one of ${DATASET_FORMATS.join(', ')}, got ${String(o.format)}`,
      );
    }
    if (!(KLINE_SUB_PARTITIONS as readonly string[]).includes(o.klineSubPartition)) {
      throw new FileSinkError(
        'QF_INVALID_OPTION',
        `DatasetWriter: "klineSubPartition" must be one of ${KLINE_SUB_PARTITIONS.join(', ')}, got ${String(o.klineSubPartition)}`,
      );
    }
    if (o.upkeep !== undefined && o.upkeep !== false) checkUpkeepOptions(o.upkeep, 'DatasetWriter: "upkeep"');
    requirePackagesOf('datasets');
    const remote = isS3Url(o.dir) && o.publish !== 'on-commit';
    this.location = remote ? o.dir : resolve(o.dir);
    this.claimOptions = o;
    this.dir = remote ? mkdtempSync(join(tmpdir(), 'quoteflow-s3-')) : resolve(o.dir);
    this.format = o.format;
    this.maxRows = positiveInt('maxRowsPerFile', o.maxRowsPerFile);
    this.maxBytes = positiveInt('maxBytesPerFile', o.maxBytesPerFile);
    this.maxAgeMs = positiveInt('maxFileAgeMs', o.maxFileAgeMs);
    this.partitioner = new DatasetPartitioner(o.klineSubPartition);
    this.maxPending = positiveInt('maxPendingFiles', o.maxPendingFiles);
    this.staleMs = positiveInt('staleStagingMs', o.staleStagingMs, 0);
    this.clock = o.clock ?? systemClock;
    this.onFile = o.onFile;
    this.fence = o.fence;
    this.publishOnCommit = o.publish === 'on-commit';
    this.onError = o.onError;
    this.pool = new EncoderPool(positiveInt('encoderThreads', o.encoderThreads, 0));
    // On start: remove what crashed writers left in DIR/.staging (a failure surfaces with the first file).
    // File modification times are real time, whatever clock drives the writer's rolling.
    const opening = this.publishOnCommit
      ? Promise.resolve()
      : openStore(remote ? o.dir : this.dir).then((opened) => {
          this.tables = { opened, logs: new Map(), upkeeps: new Map(), serial: Promise.resolve() };
        });
    this.cleaned = opening
      .then(() => cleanStaging(this.dir, this.staleMs, Date.now()))
      .then(
        () => undefined,
        (err: unknown) => {
          this.cleanupError = err;
        },
      );
    this.claimed = this.cleaned.then(() => this.claimAtStart());
    // A wait stopped by the signal is a stop, not a failure: nothing was claimed, nothing is written.
    this.claimed.catch((err: unknown) => {
      if (o.signal?.aborted !== true) this.fail(err, 'claim its series');
    });
    if (!this.publishOnCommit) this.scheduleRenewal();
  }

  /**
   * Resolves once the writer can commit files: staging cleaned and its `series` claimed in their
   * tables (after waiting for another writer, with `ifOwned: 'wait'`). Rejects with what failed
   * (`QF_OWNED`: another live writer owns some of the series), which every later call raises too.
   */
  async ready(): Promise<void> {
    await this.claimed;
    if (this.cleanupError !== undefined) throw this.cleanupError;
  }

  /** Claims the `series` of the options, each table in turn, before any file. */
  private async claimAtStart(): Promise<void> {
    if (this.tables === undefined || this.cleanupError !== undefined) return;
    for (const [kind, series] of Object.entries(this.claimOptions.series ?? {}) as [DatasetKind, string[]][])
      if (series.length > 0)
        await (
          await this.logOf(kind)
        ).claim(series, {
          ...this.claimOptions,
          ifOwned: ifOwnedOf(this.claimOptions),
        });
  }

  /** Renews the claims of an idle writer every third of its lease (its commits renew them too). */
  private scheduleRenewal(): void {
    const leaseMs = this.claimOptions.leaseMs ?? TABLE_WRITER_DEFAULTS.leaseMs;
    this.renewTimer = monotonicClock.setTimeout(() => {
      const tables = this.tables;
      if (tables === undefined || this.closing !== undefined || this.failure !== undefined) return;
      const renew = async (): Promise<void> => {
        for (const log of tables.logs.values()) await (await log).renew();
      };
      const next = tables.serial.then(renew);
      tables.serial = next.catch(() => undefined);
      next.then(
        () => this.scheduleRenewal(),
        (err: unknown) => this.fail(err, 'renew its claims'),
      );
    }, leaseMs / 3);
    // A writer left open must not keep the process alive.
    (this.renewTimer as { unref?: () => void } | undefined)?.unref?.();
  }

  /** The dataset root, absolute. */
  get root(): string {
    return this.dir;
  }

  /**
   * Buffers one record without waiting. Files it completes are written in the background; a
   * background failure is raised by the next `append`, `write`, `flush` or `close`.
   * @throws FileSinkError `QF_CLOSED` after `close()`, `QF_VALUE_OUT_OF_RANGE` for a record a
   * column cannot hold exactly (a depth `seq` outside uint64; nothing of it is buffered), or the
   * background failure.
   */
  append(record: DatasetRecord): void {
    this.check();
    this.add(record, this.clock.now());
  }

  /**
   * Buffers records, then waits while more than `maxPendingFiles` files are being written
   * (backpressure). Resolves once the records are buffered, not once they are on disk. A record
   * refused with `QF_VALUE_OUT_OF_RANGE` throws; the records before it stay buffered.
   */
  async write(records: Iterable<DatasetRecord> | DatasetRecord): Promise<void> {
    if (isRecord(records)) this.append(records);
    else {
      this.check();
      // Records delivered together arrive at one instant: one clock reading for all of them.
      const nowMs = this.clock.now();
      for (const r of records) this.add(r, nowMs);
    }
    while (this.pending.size > this.maxPending) await Promise.race(this.pending);
    this.check();
  }

  /**
   * Finishes every open file and waits until all are renamed into place. Without an `onFile`
   * callback, returns the files finished since the previous `flush()` (including those rolled in
   * the background), in the order they were renamed into place; with one, they went there and
   * this returns an empty list.
   */
  async flush(): Promise<WrittenFile[]> {
    this.check();
    for (const [key, file] of [...this.open]) this.finish(key, file);
    while (this.pending.size > 0) await Promise.all(this.pending);
    this.check();
    return this.written.splice(0);
  }

  /**
   * Finishes and writes every open file, waits for the staging cleanup, and releases the encoder
   * (its shared threads idle, unref'd). Idempotent; later calls of the others throw `QF_CLOSED`.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      monotonicClock.clearTimeout(this.renewTimer);
      try {
        for (const [key, file] of [...this.open]) this.finish(key, file);
        while (this.pending.size > 0) await Promise.all(this.pending);
        await this.cleaned;
        await this.claimed.catch(() => undefined);
        await this.releaseTables();
        if (this.location === this.dir) await removeEmptyStaging(this.dir);
        if (this.failure !== undefined) throw this.failure;
      } finally {
        this.open.clear();
        await this.closeUpkeeps();
        this.pool.close();
        await this.tables?.opened.close();
        if (this.location !== this.dir) await rm(this.dir, { recursive: true, force: true });
      }
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Resolves once the upkeep of no table runs a round (what the commits made due is done, or
   * failed): for a run that wants its tables compacted before it closes the writer (a test, a script).
   */
  async upkeepIdle(): Promise<void> {
    const tables = this.tables;
    if (tables === undefined) return;
    await Promise.all([...tables.logs.values()].map((log) => log.catch(() => undefined)));
    await Promise.all([...tables.upkeeps.values()].map((upkeep) => upkeep.idle()));
  }

  /** Stops each table's upkeep (a merge being built is dropped, nothing of it committed). Idempotent. */
  private async closeUpkeeps(): Promise<void> {
    const tables = this.tables;
    if (tables === undefined) return;
    await Promise.all([...tables.logs.values()].map((log) => log.catch(() => undefined)));
    await Promise.all([...tables.upkeeps.values()].map((upkeep) => upkeep.close()));
  }

  /**
   * Stops each table's upkeep, then gives up the claims of every table (a last commit each); a
   * failure is the writer's, unless it failed before.
   */
  private async releaseTables(): Promise<void> {
    const tables = this.tables;
    if (tables === undefined) return;
    await tables.serial;
    await this.closeUpkeeps();
    for (const opening of tables.logs.values()) {
      const log = await opening.catch(() => undefined);
      try {
        await log?.release();
      } catch (err) {
        this.fail(err, 'release its claims');
      }
    }
  }

  /** Records the writer's first failure (raised by every later call) and tells `onError`. */
  private fail(cause: unknown, what: string): void {
    if (this.failure !== undefined) return;
    const err =
      cause instanceof FileSinkError
        ? cause
        : new FileSinkError('QF_FILE_WRITE', `DatasetWriter: could not ${what} under ${this.location}`, {
            retryable: true,
            cause,
          });
    this.failure = err;
    this.onError?.(err);
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.closing !== undefined)
      throw new FileSinkError('QF_CLOSED', `DatasetWriter for ${this.dir} is closed`);
  }

  private add(record: DatasetRecord, nowMs: number): void {
    const kind = datasetKindOf(record);
    if (kind === undefined) return;
    const partition = this.partitioner.partitionOf(record, nowMs);
    let file = this.open.get(partition);
    if (file === undefined) {
      file = {
        kind,
        partition,
        builder: createColumnBuilder(kind),
        openedAtMs: nowMs,
        series: new Map(),
        session: undefined,
        shippedRows: 0,
        shippedBytes: 0,
      };
      this.open.set(partition, file);
      this.startTimer();
    }
    const b = file.builder;
    b.append(record);
    noteSeries(file.series, record);
    const rows = b.rows;
    const bytes = b.estimatedBytes;
    if (file.shippedRows + rows >= this.maxRows || file.shippedBytes + bytes >= this.maxBytes)
      this.finish(partition, file);
    else if (rows >= SHIP_ROWS || bytes >= SHIP_BYTES) {
      file.session ??= this.pool.open(this.format);
      file.shippedRows += rows;
      file.shippedBytes += bytes;
      file.session.push(b.build());
    }
  }

  /** Finishes files older than `maxFileAgeMs` on the clock's timers while any file is open. */
  private startTimer(): void {
    if (this.timer !== undefined || this.closing !== undefined) return;
    const everyMs = Math.min(1000, Math.max(10, Math.floor(this.maxAgeMs / 4)));
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      const now = this.clock.now();
      for (const [key, file] of [...this.open])
        if (now - file.openedAtMs >= this.maxAgeMs) this.finish(key, file);
      if (this.open.size > 0) this.startTimer();
    }, everyMs);
    // A writer left open must not keep the process alive (Node's timers; other clocks have none).
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  /**
   * Encodes and writes the file under the staging directory; then its committer publishes it
   * (`publish: 'on-commit'`), or it is committed to its table's log here, which renames it into
   * place (locally) or names the uploaded object (S3).
   */
  private async commit(
    session: EncodeHandle,
    stagingPath: string,
    file: OpenFile,
    relativePath: string,
    rows: number,
  ): Promise<{ bytes: number; stats: DeltaStats; stagedPath?: string }> {
    const readyPath = `${stagingPath}.ready.tmp`;
    const res = await session.end(stagingPath, readyPath);
    const stagedPath = relative(this.dir, readyPath).split(sep).join('/');
    if (this.publishOnCommit) return { ...res, stagedPath };
    // Delta statistics of a Parquet file, gathered while it was encoded.
    const committed: LogFile = {
      path: relativePath,
      rows,
      bytes: res.bytes,
      staged: stagedPath,
      ...(relativePath.endsWith('.parquet') ? { stats: res.stats } : {}),
    };
    const next = this.tables!.serial.then(() => this.commitToLog(file, committed));
    this.tables!.serial = next.catch(() => undefined);
    try {
      await next;
      // Upkeep runs in the background: the writer never waits for it.
      this.tables!.upkeeps.get(file.kind)?.nudge();
    } catch (err) {
      // Kept when the log names it (committed, the rename failed): the table's next writer publishes it.
      const log = await this.tables!.logs.get(file.kind)?.catch(() => undefined);
      if (log?.remote !== false || !log.files.has(relativePath)) await rm(readyPath, { force: true });
      throw err;
    }
    if (this.location !== this.dir) await rm(readyPath, { force: true });
    return res;
  }

  /**
   * Commits one finished file as a version of its table's log: its series claimed first if not
   * yet, the fence asked holding the publish lock.
   */
  private async commitToLog(file: OpenFile, committed: LogFile): Promise<void> {
    const { kind } = file;
    const log = await this.logOf(kind);
    const series = [...file.series.keys()];
    const unclaimed = series.filter((s) => !log.claimed.has(s));
    if (unclaimed.length > 0)
      await log.claim(unclaimed, {
        ifOwned: ifOwnedOf(this.claimOptions) === 'take-over' ? 'take-over' : 'fail',
      });
    const fence = this.fence;
    await log.transaction(async (tx) => {
      if (!log.remote && fence !== undefined && !fence())
        throw new FileSinkError(
          'QF_FENCED',
          `DatasetWriter: ${committed.path} not committed: this writer may no longer write (its lease lapsed)`,
        );
      await tx.commit({
        operation: 'checkpoint',
        add: [committed],
        ...(kind === 'kline'
          ? { series: Object.fromEntries(file.series) as Record<string, SeriesWatermark> }
          : { writes: series }),
        ...(fence === undefined ? {} : { fence }),
      });
    });
  }

  /** The log of a table (opened once; locally its files no commit names are committed first). */
  private logOf(kind: DatasetKind): Promise<DatasetLog> {
    const tables = this.tables!;
    let log = tables.logs.get(kind);
    if (log === undefined) {
      const dir = this.dir;
      const { leaseMs, command } = this.claimOptions;
      log = (async () => {
        const opened = await DatasetLog.open(dir, kind, {
          ...upkeepLogOptions(this.upkeepOptions),
          ...(tables.opened.store === undefined ? {} : { store: tables.opened.store }),
          ...(kind === 'kline' ? { summarize: (rel: string) => summarizeKlineFile(dir, rel) } : {}),
          ...(leaseMs === undefined ? {} : { leaseMs }),
          ...(command === undefined ? {} : { command }),
        });
        // On object storage an object no commit names is an uncommitted upload, never adopted.
        if (!opened.remote) await opened.transaction(async () => undefined, { adoptOrphans: true });
        await this.startUpkeep(opened);
        return opened;
      })();
      tables.logs.set(kind, log);
    }
    return log;
  }

  /** The writer's upkeep options: none when its committer keeps the table (`publish: 'on-commit'`). */
  private get upkeepOptions(): false | TableUpkeepOptions | undefined {
    return this.publishOnCommit ? false : this.claimOptions.upkeep;
  }

  /** Opens the upkeep of a table just opened and starts what a restart finds due. */
  private async startUpkeep(log: DatasetLog): Promise<void> {
    const upkeep = await openWriterUpkeep(log, {
      upkeep: this.upkeepOptions,
      clock: this.clock,
      ...(this.claimOptions.onUpkeep === undefined ? {} : { onEvent: this.claimOptions.onUpkeep }),
    });
    if (upkeep === undefined) return;
    this.tables!.upkeeps.set(log.dataset, upkeep);
    // What a restart finds due (a kill -9 mid-merge, a day closed meanwhile) is done at once.
    upkeep.nudge();
  }

  private finish(key: string, file: OpenFile): void {
    this.open.delete(key);
    const rows = file.shippedRows + file.builder.rows;
    if (rows === 0) return;
    const nowMs = this.clock.now();
    const name = partFileName(nowMs, this.writerId, ++this.seq, EXTENSIONS[this.format]);
    const relativePath = `${file.partition}/${name}`;
    const finalPath =
      this.location === this.dir ? join(this.dir, relativePath) : `${this.location}/${relativePath}`;
    const stagingPath = stagingPathFor(this.dir, name);
    const format = this.format;
    const session = file.session ?? this.pool.open(format);
    if (file.builder.rows > 0) session.push(file.builder.build());
    const job = (async () => {
      await this.cleaned;
      await this.claimed.catch(() => undefined);
      const failed = this.cleanupError ?? this.failure;
      if (failed !== undefined) {
        session.abort();
        throw failed;
      }
      const res = await this.commit(session, stagingPath, file, relativePath, rows);
      const done: WrittenFile = {
        kind: file.kind,
        format,
        path: finalPath,
        relativePath,
        rows,
        bytes: res.bytes,
        stats: res.stats,
        ...(res.stagedPath === undefined ? {} : { stagedPath: res.stagedPath }),
      };
      // Kept for flush() only when nobody listens: a long-running writer must not hoard them.
      if (this.onFile === undefined) this.written.push(done);
      else this.onFile(done);
    })().catch((cause: unknown) => this.fail(cause, `write ${relativePath} (${rows} rows)`));
    const tracked: Promise<void> = job.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}

function isRecord(x: Iterable<DatasetRecord> | DatasetRecord): x is DatasetRecord {
  return (
    typeof x === 'object' && x !== null && 'type' in x && typeof (x as { type: unknown }).type === 'string'
  );
}

/** Adds a record's series to a file's: kline `CODE|K` with the bar in its watermark, a depth code, an exchange. */
function noteSeries(series: Map<string, SeriesWatermark | undefined>, record: DatasetRecord): void {
  if (record.type === 'depth') series.set(record.code, undefined);
  else if (record.type === 'suspension') series.set(record.exchange, undefined);
  else {
    const key = seriesKey(record.code, record.klineType);
    series.set(key, addWatermark(series.get(key), { first: record.tsMs, last: record.tsMs, rows: 1 }));
  }
}
