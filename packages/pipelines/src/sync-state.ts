import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { isKlineType, type KlineType } from '@quoteflow/core';
import { writeFileDurably } from '@quoteflow/core/internal';
import { checkFormatVersion, QUOTEFLOW_FORMAT_VERSION } from '@quoteflow/sinks/internal';
import { PipelineError } from './pipeline-error.js';

/** The key of one series in the state file: `code:klineType`. */
export function stateKey(code: string, klineType: KlineType): string {
  return `${code}:${klineType}`;
}

/** What the dataset holds of one series: its first and last closed bar (epoch ms) and its rows. */
export interface SeriesExtent {
  readonly firstMs: number;
  readonly lastMs: number;
  readonly rows: number;
}

/** `held` with `added` rows: the earlier first, the later last, the rows summed. */
export function widenExtent(held: SeriesExtent | undefined, added: SeriesExtent): SeriesExtent {
  if (held === undefined) return added;
  return {
    firstMs: Math.min(held.firstMs, added.firstMs),
    lastMs: Math.max(held.lastMs, added.lastMs),
    rows: held.rows + added.rows,
  };
}

const ExtentSchema = z.object({
  first: z.number().int(),
  last: z.number().int(),
  rows: z.number().int().nonnegative(),
});

const StateFileSchema = z.union([
  z.object({
    version: z.literal(2),
    /** The quoteflow format version it was written in (none: 1). */
    formatVersion: z.number().int().positive().optional(),
    /** Per `code:klineType`: first and last closed bar start (epoch ms) in the dataset, and rows. */
    series: z.record(z.string(), ExtentSchema),
    /** Dataset files (relative to the dataset directory) whose rows `series` includes. */
    files: z.array(z.string()),
    updatedAt: z.string(),
  }),
  // Version 1 kept only the last bar: it is read as "nothing known", so every file is read again.
  z.object({
    version: z.literal(1),
    series: z.record(z.string(), z.number().int()),
    files: z.array(z.string()),
  }),
]);

/**
 * What K-line sync remembers between runs: per series the first and last closed bar in the dataset
 * and its row count, and the dataset files already accounted for (files written after the last save
 * are read back on restart, so a crash between a file landing and the state landing never
 * duplicates a bar). The extents let a later run with a larger `--bars` fetch the older bars.
 */
export class SyncState {
  readonly #extents = new Map<string, SeriesExtent>();
  readonly #files = new Set<string>();

  /** Start of the last closed bar of a series in the dataset, or `undefined`. */
  lastClosed(code: string, klineType: KlineType): number | undefined {
    return this.#extents.get(stateKey(code, klineType))?.lastMs;
  }

  /** What the dataset holds of a series, or `undefined` when nothing. */
  extent(code: string, klineType: KlineType): SeriesExtent | undefined {
    return this.#extents.get(stateKey(code, klineType));
  }

  /** Adds rows written to the dataset (one file's, one checkpoint's): widens the extent, adds the rows. */
  record(code: string, klineType: KlineType, added: SeriesExtent): void {
    const key = stateKey(code, klineType);
    this.#extents.set(key, widenExtent(this.#extents.get(key), added));
  }

  /** Sets what the dataset holds of a series (read from the dataset's commit log). */
  set(code: string, klineType: KlineType, extent: SeriesExtent): void {
    this.#extents.set(stateKey(code, klineType), extent);
  }

  /** Whether a dataset file is already accounted for. */
  hasFile(relativePath: string): boolean {
    return this.#files.has(relativePath);
  }

  addFile(relativePath: string): void {
    this.#files.add(relativePath);
  }

  /** Every series extent, for reports. */
  entries(): [string, SeriesExtent][] {
    return [...this.#extents];
  }

  toJSON(): z.infer<typeof StateFileSchema> {
    return {
      version: 2,
      formatVersion: QUOTEFLOW_FORMAT_VERSION,
      series: Object.fromEntries(
        [...this.#extents]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, e]) => [key, { first: e.firstMs, last: e.lastMs, rows: e.rows }]),
      ),
      files: [...this.#files].sort(),
      updatedAt: new Date().toISOString(),
    };
  }

  /** Writes the state to `path` durably (temporary file, fsync, rename, directory fsync). */
  async save(path: string): Promise<void> {
    await writeFileDurably(path, `${JSON.stringify(this.toJSON(), null, 2)}\n`);
  }

  /**
   * Reads the state at `path`; a missing file is an empty state, a malformed one a `QF_STATE`
   * error, one of a newer quoteflow format a `FormatVersionError` (`QF_FORMAT_VERSION`).
   */
  static async load(path: string): Promise<SyncState> {
    const state = new SyncState();
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return state;
      throw new PipelineError(
        'QF_STATE',
        `state file ${JSON.stringify(path)} cannot be read: ${(err as Error).message}`,
        { cause: err },
      );
    }
    let json: unknown;
    let parsed: z.infer<typeof StateFileSchema>;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw notState(path, err);
    }
    // A newer format is refused as such (FormatVersionError), before this release's schema judges it.
    if (typeof json === 'object' && json !== null && 'formatVersion' in json)
      checkFormatVersion(`state file ${JSON.stringify(path)}`, json.formatVersion);
    try {
      parsed = StateFileSchema.parse(json);
    } catch (err) {
      throw notState(path, err);
    }
    if (parsed.version === 1) return state;
    for (const [key, extent] of Object.entries(parsed.series)) {
      const colon = key.lastIndexOf(':');
      const klineType = Number(key.slice(colon + 1));
      if (colon <= 0 || !isKlineType(klineType)) {
        throw new PipelineError(
          'QF_STATE',
          `state file ${JSON.stringify(path)}: series key ${JSON.stringify(key)} is not code:klineType`,
        );
      }
      state.record(key.slice(0, colon), klineType, {
        firstMs: extent.first,
        lastMs: extent.last,
        rows: extent.rows,
      });
    }
    for (const f of parsed.files) state.addFile(f);
    return state;
  }
}

function notState(path: string, err: unknown): PipelineError {
  return new PipelineError(
    'QF_STATE',
    `state file ${JSON.stringify(path)} is not a quoteflow sync state: ${(err as Error).message.slice(0, 200)}`,
    { cause: err },
  );
}
