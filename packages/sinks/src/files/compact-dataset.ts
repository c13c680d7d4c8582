import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { DatasetKind } from './dataset-columns.js';
import type { LogFile } from './dataset-log-format.js';
import { DatasetLog } from './dataset-log.js';
import type { DatasetLogOptions } from './dataset-log-options.js';
import type { DatasetFormat } from './dataset-writer-options.js';
import { FileSinkError } from './file-sink-error.js';
import { requirePackagesOf } from '../internal/optional-packages.js';
import {
  isProcessAlive,
  newWriterId,
  partFileName,
  removeEmptyStaging,
  stagingPathFor,
  STAGING_DIR,
} from './internal/staging.js';
import type { ObjectStore } from './storage/object-store.js';
import { openStore } from './storage/open-store.js';

/** Options of {@link compactDataset}. */
export interface CompactDatasetOptions {
  /**
   * The dataset root `DIR`, or `s3://bucket/prefix`; with `store`, the local directory the
   * compacted files are built in before their upload.
   */
  readonly dir: string;
  readonly dataset: DatasetKind;
  /** The object store holding the table (see `DatasetLog`), when `dir` is a scratch directory. */
  readonly store?: ObjectStore;
  /**
   * A compacted file holds at most this many rows (row groups of up to 1 Mi rows inside). Readers
   * pay per file, not per row group: a day of 1-minute bars of 1,000 series (1.44 M rows) in one
   * file reads as fast as it can (`pnpm bench compaction`). The rows of one file are held in memory
   * while it is encoded (about 100 bytes a K-line row). @defaultValue 4,194,304 (4 Mi)
   */
  readonly maxRowsPerFile?: number;
  /** Compacts only the partitions (paths relative to `DIR`) this accepts; automatic compaction passes the closed ones. */
  readonly partitions?: (partition: string) => boolean;
  /**
   * A partition is compacted once it has this many small files (fewer rows than
   * `maxRowsPerFile`); a function decides per partition (a sync waits for more in the partition it
   * is still writing). @defaultValue 2
   */
  readonly minSmallFiles?: number | ((partition: string) => number);
  /** Reads files no commit named yet (see {@link DatasetLog}). */
  readonly summarize?: DatasetLogOptions['summarize'];
  readonly lock?: DatasetLogOptions['lock'];
  /** Wall-clock time (epoch ms): file names and commit times. */
  readonly now?: () => number;
  /** Called after each partition is swapped. */
  readonly onPartition?: (result: CompactedPartition) => void;
}

/** One partition compacted. */
export interface CompactedPartition {
  /** Relative to `DIR`, e.g. `kline/kline_type=1/month=2026-01`. */
  readonly partition: string;
  readonly format: DatasetFormat;
  /** The files merged (the partition's full files are left alone). */
  readonly filesBefore: number;
  readonly filesAfter: number;
  readonly rows: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

/** Default of {@link CompactDatasetOptions.maxRowsPerFile}. */
export const COMPACTED_FILE_MAX_ROWS = 4 * 1024 * 1024;

const FORMAT_OF: Record<string, DatasetFormat> = {
  '.parquet': 'parquet',
  '.arrow': 'arrow',
  '.ndjson': 'ndjson',
};

/**
 * Merges the small files (fewer rows than `maxRowsPerFile`; full ones stay) of each partition of
 * one dataset into as few files as `maxRowsPerFile` allows, with exactly the same rows (record batches are concatenated, never re-typed). Each
 * partition is built beside the dataset (`DIR/.staging/`), committed to the dataset's log, then
 * swapped in with one `renameat2(RENAME_EXCHANGE)` where Linux offers it, so a reader listing the
 * partition sees the old files or the new ones. Files that land in the partition while it is being
 * built (a sync publishing) stay: they are not in the compaction and are moved into the new
 * directory. kill -9 at any moment: the next writer or compaction finishes a committed swap, and an
 * uncommitted one leaves only staging behind.
 */
export async function compactDataset(options: CompactDatasetOptions): Promise<CompactedPartition[]> {
  const maxRows = options.maxRowsPerFile ?? COMPACTED_FILE_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 1) {
    throw new FileSinkError(
      'QF_INVALID_OPTION',
      `compactDataset: "maxRowsPerFile" must be an integer >= 1, got ${String(maxRows)}`,
    );
  }
  const opened = options.store === undefined ? await openStore(options.dir) : undefined;
  try {
    const store = options.store ?? opened?.store;
    return await compactOpened(options, opened?.root ?? options.dir, store, maxRows);
  } finally {
    await opened?.close();
  }
}

async function compactOpened(
  options: CompactDatasetOptions,
  root: string,
  store: ObjectStore | undefined,
  maxRows: number,
): Promise<CompactedPartition[]> {
  const now = options.now ?? Date.now;
  const log = await DatasetLog.open(root, options.dataset, {
    now,
    ...(options.summarize === undefined ? {} : { summarize: options.summarize }),
    ...(options.lock === undefined ? {} : { lock: options.lock }),
    ...(store === undefined ? {} : { store }),
  });
  // Current, published and every file on disk named, before choosing what to merge (on object
  // storage the log alone is the table).
  if (!log.remote) await log.transaction(async () => removeAbandonedBuilds(root), { adoptOrphans: true });
  const results: CompactedPartition[] = [];
  for (const group of partitionGroups(log.files, options.partitions)) {
    // Full files stay as they are: a partition that grows by one small file rewrites that file only.
    const small = group.files.filter((f) => f.rows < maxRows);
    const min = options.minSmallFiles;
    if (small.length < Math.max(2, typeof min === 'function' ? min(group.partition) : (min ?? 2))) continue;
    const result = await compactFiles(log, { ...group, files: small }, { maxRows, now });
    if (result === undefined) continue;
    results.push(result);
    options.onPartition?.(result);
  }
  if (!log.remote) await removeEmptyStaging(root);
  return results;
}

/** The live files of one partition in one format. */
export interface PartitionGroup {
  readonly partition: string;
  readonly format: DatasetFormat;
  readonly files: LogFile[];
}

/** The log's live files by partition and format (each sorted by path), partitions in order. */
export function partitionGroups(
  files: ReadonlyMap<string, LogFile>,
  accept: ((partition: string) => boolean) | undefined,
): PartitionGroup[] {
  const groups = new Map<string, PartitionGroup>();
  for (const file of files.values()) {
    const partition = dirname(file.path);
    const format = FORMAT_OF[extname(file.path)];
    if (format === undefined || (accept !== undefined && !accept(partition))) continue;
    const key = `${partition}\u0000${format}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { partition, format, files: [] }));
    group.files.push(file);
  }
  for (const g of groups.values()) g.files.sort((a, b) => a.path.localeCompare(b.path));
  return [...groups.values()].sort((a, b) => a.partition.localeCompare(b.partition));
}

/** Options of {@link compactFiles}. */
export interface CompactFilesOptions {
  /** An output file holds at most this many rows. */
  readonly maxRows: number;
  /** Wall-clock time (epoch ms): file names. */
  readonly now: () => number;
  /** Stops the build between slices (nothing is committed; the build is removed). */
  readonly signal?: AbortSignal;
}

/**
 * Merges `group.files` (small files of one partition and format, live in `log`) into as few files
 * as `maxRows` allows and commits them with the remove of the merged ones as one version: on a
 * local disk built under `DIR/.staging/` and swapped in with the partition (see
 * {@link compactDataset}), on object storage uploaded and committed. Resolves with what it did, or
 * `undefined` when the build is void: another compaction replaced one of the files meanwhile
 * (the log decides, holding the publish lock or by the conditional PUT); nothing of it is left.
 */
export async function compactFiles(
  log: DatasetLog,
  group: { readonly partition: string; readonly format: DatasetFormat; readonly files: readonly LogFile[] },
  options: CompactFilesOptions,
): Promise<CompactedPartition | undefined> {
  const root = log.root;
  const writerId = newWriterId();
  const stagedDir = stagingPathFor(root, `compact-${writerId}.ready`);
  const stagedRel = `${STAGING_DIR}/${basename(stagedDir)}`;
  const stamp = options.now();
  let merged;
  try {
    // apache-arrow and parquet-wasm are optional peers: loaded on first use.
    requirePackagesOf('datasets');
    const { mergeFiles } = await import('./internal/merge-files.js');
    merged = await mergeFiles(group.files, {
      dataset: log.dataset,
      format: group.format,
      maxRows: options.maxRows,
      outDir: stagedDir,
      nameOf: (n) => partFileName(stamp, writerId, n, group.format),
      read: (path) => readLive(log, path),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (err) {
    await rm(stagedDir, { recursive: true, force: true });
    // Locally another writer's compaction swaps the files it replaced away at once: a file gone
    // while it was read means this build is void, unless the log still names it (lost: an error).
    const replaced = await replacedMeanwhile(log, group.files).catch(() => false);
    if (replaced && !(options.signal?.aborted ?? false)) return undefined;
    throw err;
  }
  const outputs: LogFile[] = merged.outputs.map((o) => ({
    path: `${group.partition}/${o.name}`,
    rows: o.rows,
    bytes: o.bytes,
    // On object storage the commit uploads it; locally the partition swap publishes it.
    ...(log.remote ? { staged: `${stagedRel}/${o.name}` } : {}),
    ...(o.stats === undefined ? {} : { stats: o.stats }),
  }));
  const committed = await log
    .transaction(async (tx) => {
      // Another compaction replaced some of these files meanwhile: this build is void.
      if (!group.files.every((f) => log.files.has(f.path))) return false;
      await tx.commit({
        operation: 'compact',
        add: outputs,
        remove: group.files.map((f) => f.path),
        // On object storage nothing can be swapped: new files and `remove` in one commit.
        ...(log.remote ? {} : { swap: { partition: group.partition, staged: stagedRel } }),
      });
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof FileSinkError && err.code === 'QF_CONFLICT') return false;
      throw err;
    })
    .finally(async () => {
      // Locally a committed build is the partition now; anything else of it goes.
      if (log.remote) await rm(stagedDir, { recursive: true, force: true });
    });
  if (!committed) {
    await rm(stagedDir, { recursive: true, force: true });
    return undefined;
  }
  return {
    partition: group.partition,
    format: group.format,
    filesBefore: group.files.length,
    filesAfter: outputs.length,
    rows: merged.rows,
    bytesBefore: merged.bytesRead,
    bytesAfter: outputs.reduce((n, f) => n + f.bytes, 0),
  };
}

/** Whether a newer version of the log no longer names one of `files` (another compaction replaced it). */
async function replacedMeanwhile(log: DatasetLog, files: readonly LogFile[]): Promise<boolean> {
  await log.refresh();
  return !files.every((f) => log.files.has(f.path));
}

/** A file the log names, read from the disk or the object store (gone: an error naming it). */
async function readLive(log: DatasetLog, path: string): Promise<Uint8Array> {
  if (!log.remote) return readFile(join(log.root, path));
  const bytes = await log.store.read(path);
  if (bytes === undefined)
    throw new FileSinkError(
      'QF_DATASET_LOG',
      `${log.store.location}/${path}: named by the ${log.dataset} table, but gone`,
    );
  return bytes;
}

/**
 * Removes compaction builds that were never committed and whose process is gone (this host). Runs
 * under the publish lock after committed work was published, so a build still present belongs to no
 * commit.
 */
async function removeAbandonedBuilds(root: string): Promise<void> {
  const staging = join(root, STAGING_DIR);
  const names = await readdir(staging).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^(.*)~(\d+)~compact-[0-9a-f]+\.ready\.tmp$/.exec(name);
    if (m === null || Number(m[2]) === process.pid) continue;
    if (m[1] !== basename(stagingPathFor(root, 'x')).split('~')[0]) continue;
    if (isProcessAlive(Number(m[2]))) continue;
    await rm(join(staging, name), { recursive: true, force: true });
  }
}
