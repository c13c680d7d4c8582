import type { DatasetKind } from './dataset-columns.js';
import { DATASET_LOG_DIR, DatasetLog } from './dataset-log.js';
import { FileSinkError } from './file-sink-error.js';
import type { ObjectStore } from './storage/object-store.js';
import { openStore } from './storage/open-store.js';

/** Delta's default retention of removed files (`delta.deletedFileRetentionDuration`): 7 days. */
export const VACUUM_DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;

/** Options of {@link vacuumDataset}. */
export interface VacuumDatasetOptions {
  /** `s3://bucket/prefix` (a local `DIR` has nothing to vacuum: compaction swapped its files away). */
  readonly dir: string;
  readonly dataset: DatasetKind;
  /**
   * Files removed longer ago than this (and files no version names, uploaded longer ago) are
   * deleted; time travel to a version older than this may then miss files. It must exceed the
   * longest a writer takes from uploading a file to committing it. @defaultValue 7 days
   */
  readonly retentionMs?: number;
  /** Wall-clock time (epoch ms). */
  readonly now?: () => number;
  /** The opened store (`dir` is then unused). */
  readonly store?: ObjectStore;
}

/** What {@link vacuumDataset} did. */
export interface VacuumResult {
  readonly dataset: DatasetKind;
  /** Keys deleted, relative to the root: removed by a compaction, or never committed. */
  readonly deleted: readonly string[];
  /** Data files not in the current version kept (younger than the retention). */
  readonly retained: number;
}

const DATA_FILE = /\.(parquet|arrow|ndjson)$/;

/**
 * Deletes the data files of a Delta table on object storage that the current version does not
 * name, once older than the retention: files a compaction removed (by the `remove` action's time)
 * and uploads no commit named (a writer killed between its upload and its commit; by the object's
 * time). Delta readers never read either, so this only frees space and ends what plain-Parquet
 * globbing of the bucket sees twice; time travel to versions older than the retention ends with it.
 */
export async function vacuumDataset(options: VacuumDatasetOptions): Promise<VacuumResult> {
  const retentionMs = options.retentionMs ?? VACUUM_DEFAULT_RETENTION_MS;
  if (!Number.isFinite(retentionMs) || retentionMs < 0)
    throw new FileSinkError(
      'QF_INVALID_OPTION',
      `vacuumDataset: "retentionMs" must be >= 0, got ${String(retentionMs)}`,
    );
  const opened = options.store === undefined ? await openStore(options.dir) : undefined;
  try {
    const store = options.store ?? opened?.store;
    if (store === undefined) return { dataset: options.dataset, deleted: [], retained: 0 };
    const log = await DatasetLog.open(opened?.root ?? options.dir, options.dataset, { store });
    return await vacuumLog(log, retentionMs, (options.now ?? Date.now)());
  } finally {
    await opened?.close();
  }
}

/**
 * {@link vacuumDataset} of a log already open and read (table upkeep's): the data files of its
 * store that the version read does not name, removed (or uploaded) before `nowMs - retentionMs`.
 */
export async function vacuumLog(log: DatasetLog, retentionMs: number, nowMs: number): Promise<VacuumResult> {
  const { store, dataset } = log;
  if (!log.remote) return { dataset, deleted: [], retained: 0 };
  const cutoff = nowMs - retentionMs;
  const removed = log.removed;
  const deleted: string[] = [];
  let retained = 0;
  for (const o of await store.list(`${dataset}/`)) {
    if (!DATA_FILE.test(o.key) || o.key.includes(`/${DATASET_LOG_DIR}/`) || log.files.has(o.key)) continue;
    const since = removed.get(o.key) ?? o.lastModifiedMs;
    if (since <= cutoff) deleted.push(o.key);
    else retained++;
  }
  await store.delete(deleted);
  return { dataset, deleted, retained };
}
