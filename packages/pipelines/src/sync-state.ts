import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { isKlineType, type KlineType } from '@quoteflow/core';
import { PipelineError } from './pipeline-error.js';
import { writeFileAtomic } from './internal/write-file-atomic.js';

/** The key of one series in the state file: `code:klineType`. */
export function stateKey(code: string, klineType: KlineType): string {
  return `${code}:${klineType}`;
}

const StateFileSchema = z.object({
  version: z.literal(1),
  /** Start (epoch ms) of the last closed bar written to the dataset, per `code:klineType`. */
  series: z.record(z.string(), z.number().int()),
  /** Dataset files (relative to the dataset directory) whose bars the `series` maxima include. */
  files: z.array(z.string()),
  updatedAt: z.string(),
});

/**
 * What K-line sync remembers between runs: the last closed bar per series that is in the dataset,
 * and the dataset files already accounted for (files written after the last save are read back on
 * restart, so a crash between a file landing and the state landing never duplicates a bar).
 */
export class SyncState {
  readonly #lastClosed = new Map<string, number>();
  readonly #files = new Set<string>();

  /** Start of the last closed bar of a series in the dataset, or `undefined`. */
  lastClosed(code: string, klineType: KlineType): number | undefined {
    return this.#lastClosed.get(stateKey(code, klineType));
  }

  /** Records a bar start as written; earlier starts never move the mark back. */
  advance(code: string, klineType: KlineType, tsMs: number): void {
    const key = stateKey(code, klineType);
    const last = this.#lastClosed.get(key);
    if (last === undefined || tsMs > last) this.#lastClosed.set(key, tsMs);
  }

  /** Whether a dataset file is already accounted for. */
  hasFile(relativePath: string): boolean {
    return this.#files.has(relativePath);
  }

  addFile(relativePath: string): void {
    this.#files.add(relativePath);
  }

  /** Every series mark, for reports. */
  entries(): [string, number][] {
    return [...this.#lastClosed];
  }

  toJSON(): z.infer<typeof StateFileSchema> {
    return {
      version: 1,
      series: Object.fromEntries([...this.#lastClosed].sort(([a], [b]) => a.localeCompare(b))),
      files: [...this.#files].sort(),
      updatedAt: new Date().toISOString(),
    };
  }

  /** Writes the state to `path` atomically (temporary file, fsync, rename). */
  async save(path: string): Promise<void> {
    await writeFileAtomic(path, `${JSON.stringify(this.toJSON(), null, 2)}\n`);
  }

  /** Reads the state at `path`; a missing file is an empty state, a malformed one a `QF_STATE` error. */
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
    let parsed: z.infer<typeof StateFileSchema>;
    try {
      parsed = StateFileSchema.parse(JSON.parse(text));
    } catch (err) {
      throw new PipelineError(
        'QF_STATE',
        `state file ${JSON.stringify(path)} is not a quoteflow sync state: ${(err as Error).message.slice(0, 200)}`,
        { cause: err },
      );
    }
    for (const [key, tsMs] of Object.entries(parsed.series)) {
      const colon = key.lastIndexOf(':');
      const klineType = Number(key.slice(colon + 1));
      if (colon <= 0 || !isKlineType(klineType)) {
        throw new PipelineError(
          'QF_STATE',
          `state file ${JSON.stringify(path)}: series key ${JSON.stringify(key)} is not code:klineType`,
        );
      }
      state.advance(key.slice(0, colon), klineType, tsMs);
    }
    for (const f of parsed.files) state.addFile(f);
    return state;
  }
}
