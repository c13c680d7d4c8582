import { z } from 'zod';
import type { DeltaStats } from './delta/delta-actions.js';

/**
 * What a dataset holds of one series (keyed by core's `seriesKey`, `CODE|K`; logs written before
 * 2026-11 say `CODE:K`, read as the same key): the oldest and the newest
 * closed bar (epoch ms of the bar start) and the rows. In a commit it is what the commit added.
 */
export interface SeriesWatermark {
  readonly first: number;
  readonly last: number;
  readonly rows: number;
}

/** A file a commit adds: where it lives (relative to `DIR`), and for a checkpoint where it waits until published. */
export interface LogFile {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  /** The staged file (relative to `DIR`) a checkpoint renames to `path` once committed. */
  readonly staged?: string;
  /** Delta statistics of a Parquet file (the log reads them from the file when a commit gives none). */
  readonly stats?: DeltaStats;
}

/** What a commit does (see {@link LogEntry}). */
export const LOG_OPERATIONS = ['checkpoint', 'adopt', 'compact', 'convert', 'claim'] as const;
export type LogOperation = (typeof LOG_OPERATIONS)[number];

/**
 * One version of a dataset's commit log as quoteflow reads it (the Delta commit
 * `DIR/<dataset>/_delta_log/<version>.json`; before 2026-11, `DIR/_quoteflow_log/<dataset>/<version>.json`):
 * - `checkpoint`: a writer's files (staged, published once committed) and per series what they add;
 * - `adopt`: files found on disk that no commit named (written by an earlier quoteflow, or by a
 *   writer that does not commit, such as depth capture), with what they hold;
 * - `compact`: a partition's files replaced by fewer ones holding the same rows; `swap` names the
 *   staged directory that is exchanged with the partition directory;
 * - `convert`: the state of a pre-Delta log, as the Delta table's first version;
 * - `claim`: a writer claims series, renews its claims or gives them up (no rows).
 */
export interface LogEntry {
  readonly version: number;
  readonly committedAt: string;
  /** `host~pid~id` of the committing writer. */
  readonly writer: string;
  readonly operation: LogOperation;
  readonly add: readonly LogFile[];
  readonly remove: readonly string[];
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
  readonly swap?: { readonly partition: string; readonly staged: string };
}

/** The dataset as of one version: its live files and per-series watermarks. */
export interface LogSnapshot {
  readonly version: number;
  readonly files: readonly LogFile[];
  readonly series: Readonly<Record<string, SeriesWatermark>>;
}

const WatermarkSchema = z.object({
  first: z.number().int(),
  last: z.number().int(),
  rows: z.number().int().nonnegative(),
});
const LogFileSchema = z.object({
  path: z.string().min(1),
  rows: z.number().int(),
  bytes: z.number().int().nonnegative(),
  staged: z.string().min(1).optional(),
});

export const LogEntrySchema = z.object({
  version: z.number().int().positive(),
  committedAt: z.string(),
  writer: z.string(),
  operation: z.enum(LOG_OPERATIONS),
  add: z.array(LogFileSchema),
  remove: z.array(z.string()),
  series: z.record(z.string(), WatermarkSchema).optional(),
  swap: z.object({ partition: z.string().min(1), staged: z.string().min(1) }).optional(),
});

export const LogSnapshotSchema = z.object({
  version: z.number().int().nonnegative(),
  files: z.array(LogFileSchema),
  series: z.record(z.string(), WatermarkSchema),
});

/** `held` widened by `added`: the older first, the newer last, the rows summed. */
export function addWatermark(held: SeriesWatermark | undefined, added: SeriesWatermark): SeriesWatermark {
  if (held === undefined) return added;
  return {
    first: Math.min(held.first, added.first),
    last: Math.max(held.last, added.last),
    rows: held.rows + added.rows,
  };
}

/** Zero-padded so that names sort by version. */
export function versionFileName(version: number): string {
  return `${String(version).padStart(20, '0')}.json`;
}

export function snapshotFileName(version: number): string {
  return `${String(version).padStart(20, '0')}.snapshot.json`;
}

/** The version of a log directory entry, and whether it is a snapshot; `undefined` for other files. */
export function parseLogFileName(name: string): { version: number; snapshot: boolean } | undefined {
  const m = /^(\d{20})(\.snapshot)?\.json$/.exec(name);
  if (m === null) return undefined;
  return { version: Number(m[1]), snapshot: m[2] !== undefined };
}

/**
 * A series key as core's `seriesKey` spells it (`CODE|K`), also from a log written before the keys
 * changed (`CODE:K`). Codes contain neither `|` nor `:`.
 */
export function normalizeSeriesKey(key: string): string {
  if (key.includes('|')) return key;
  const colon = key.lastIndexOf(':');
  return colon <= 0 ? key : `${key.slice(0, colon)}|${key.slice(colon + 1)}`;
}
