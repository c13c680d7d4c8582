import type { LogFile } from '../dataset-log-format.js';

/** Files merged at once in a partition still being written (and how many of a tier it may hold: one less). */
export const MERGE_FAN_IN = 4;

/** Options of {@link planMerges}. */
export interface MergePlanOptions {
  /** A file with this many rows or more is full: never merged again. */
  readonly targetRows: number;
  /** Whether the partition is closed for writing (an earlier month than the clock's): merged whole. */
  readonly closed: boolean;
  /** @defaultValue {@link MERGE_FAN_IN} */
  readonly fanIn?: number;
}

/**
 * The tier of a file of `rows` rows: `floor(log_F(rows))`, so `F` files of one tier merge into one
 * file of the next (their rows sum to between `F^(k+1)` and `F^(k+2)`).
 */
export function mergeTier(rows: number, fanIn = MERGE_FAN_IN): number {
  let tier = 0;
  for (let r = Math.max(1, rows); r >= fanIn; r = Math.floor(r / fanIn)) tier++;
  return tier;
}

/**
 * The merges one partition's files are due (each a group of its small files, oldest first), tiered
 * as Delta's auto-compaction and LSM stores do it, so the partition being written never holds more
 * than `F - 1` small files of a tier and a row is rewritten about `log_F(rows per full file / rows
 * per checkpoint)` times: once `F` files of a tier are there (a sync adds one about every
 * checkpoint), they become one of the next. A day of 30 s checkpoints (2,880 files) so leaves
 * about the sum of the digits of 2,880 in base 4 (six files; `TableUpkeep` also plans the partition
 * being written as closed once a day, after a UTC midnight). A closed partition (nothing is
 * written there any more) is merged whole once it holds two small files. Full files
 * (`targetRows` or more) stay as they are.
 */
export function planMerges(files: readonly LogFile[], options: MergePlanOptions): LogFile[][] {
  const fanIn = options.fanIn ?? MERGE_FAN_IN;
  // Paths sort by creation time (part-<UTC stamp>-…): the oldest files of a tier merge first.
  const small = files.filter((f) => f.rows < options.targetRows).sort((a, b) => a.path.localeCompare(b.path));
  if (options.closed) return small.length >= 2 ? [small] : [];
  const tiers = new Map<number, LogFile[]>();
  for (const f of small) {
    const tier = mergeTier(f.rows, fanIn);
    const of = tiers.get(tier);
    if (of === undefined) tiers.set(tier, [f]);
    else of.push(f);
  }
  const groups: LogFile[][] = [];
  for (const tier of [...tiers.keys()].sort((a, b) => a - b)) {
    const of = tiers.get(tier)!;
    for (let i = 0; i + fanIn <= of.length; i += fanIn) groups.push(of.slice(i, i + fanIn));
  }
  return groups;
}
