import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatasetKind } from '../dataset-columns.js';
import {
  addWatermark,
  LogEntrySchema,
  LogSnapshotSchema,
  normalizeSeriesKey,
  parseLogFileName,
  versionFileName,
  snapshotFileName,
  type LogEntry,
  type LogFile,
  type SeriesWatermark,
} from '../dataset-log-format.js';
import { FileSinkError } from '../file-sink-error.js';
import { applyLogEntry } from '../internal/apply-log-entry.js';

/** Where quoteflow kept a dataset's commit log before it became a Delta log: `DIR/_quoteflow_log/<dataset>/`. */
export const LEGACY_LOG_DIR = '_quoteflow_log';

/** A dataset as its pre-Delta log left it: live files and per-series watermarks. */
export interface LegacyState {
  readonly version: number;
  readonly files: readonly LogFile[];
  readonly series: ReadonlyMap<string, SeriesWatermark>;
}

/**
 * Reads the pre-Delta commit log of `dataset` under `root` (`undefined` where there is none), after
 * publishing what it committed and a crashed writer did not publish. Call it holding the dataset's
 * publish lock.
 */
export async function readLegacyLog(root: string, dataset: DatasetKind): Promise<LegacyState | undefined> {
  const dir = join(root, LEGACY_LOG_DIR, dataset);
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (names === undefined) return undefined;
  const versions = new Set<number>();
  let newestSnapshot = -1;
  for (const name of names) {
    const parsed = parseLogFileName(name);
    if (parsed === undefined) continue;
    if (parsed.snapshot) newestSnapshot = Math.max(newestSnapshot, parsed.version);
    else versions.add(parsed.version);
  }
  const files = new Map<string, LogFile>();
  const series = new Map<string, SeriesWatermark>();
  let version = 0;
  if (newestSnapshot > 0 && !versions.has(1)) {
    const snapshot = LogSnapshotSchema.parse(await readJson(join(dir, snapshotFileName(newestSnapshot))));
    for (const f of snapshot.files) files.set(f.path, { path: f.path, rows: f.rows, bytes: f.bytes });
    for (const [k, w] of Object.entries(snapshot.series)) series.set(normalizeSeriesKey(k), w);
    version = snapshot.version;
  }
  const applied = Number((await readFile(join(dir, '_applied'), 'utf8').catch(() => '0')).trim()) || 0;
  while (versions.has(version + 1)) {
    const entry = LogEntrySchema.parse(await readJson(join(dir, versionFileName(version + 1)))) as LogEntry;
    if (entry.version > applied) await applyLogEntry(root, entry);
    for (const path of entry.remove) files.delete(path);
    for (const f of entry.add) files.set(f.path, { path: f.path, rows: f.rows, bytes: f.bytes });
    for (const [k, w] of Object.entries(entry.series ?? {}))
      series.set(normalizeSeriesKey(k), addWatermark(series.get(normalizeSeriesKey(k)), w));
    version = entry.version;
  }
  return { version, files: [...files.values()], series };
}

/** Removes the pre-Delta log of `dataset` (and `_quoteflow_log/` once it is empty). */
export async function removeLegacyLog(root: string, dataset: DatasetKind): Promise<void> {
  await rm(join(root, LEGACY_LOG_DIR, dataset), { recursive: true, force: true });
  await rmdir(join(root, LEGACY_LOG_DIR)).catch(() => undefined);
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
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
