import { access, link, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { makeDirectory, renameDurably, syncDirectory } from '@quoteflow/core/internal';
import type { LogEntry } from '../dataset-log-format.js';
import { FileSinkError } from '../file-sink-error.js';
import { exchangePaths } from './exchange-paths.js';

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/**
 * Publishes a committed log entry; idempotent, so a writer that finds a crashed one's commit
 * unpublished runs it again from wherever it stopped:
 * - staged files of a checkpoint are renamed into place (one already in place is left alone);
 * - a compaction's staged partition directory is exchanged with the live one (atomically where the
 *   OS can), the files it does not replace hard-linked into the new one beforehand; what landed in
 *   the old directory after the links (a writer that does not commit) is moved back, and the old
 *   directory removed.
 */
export async function applyLogEntry(root: string, entry: LogEntry): Promise<void> {
  if (entry.swap !== undefined) {
    await applySwap(root, entry, entry.swap);
    return;
  }
  for (const file of entry.add) {
    if (file.staged === undefined) continue;
    const from = join(root, file.staged);
    const to = join(root, file.path);
    try {
      await renameDurably(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !(await exists(to))) {
        throw new FileSinkError(
          'QF_DATASET_LOG',
          `version ${entry.version} of the commit log names ${file.path}, but neither it nor its staged file is there`,
          { cause: err },
        );
      }
    }
  }
}

async function applySwap(
  root: string,
  entry: LogEntry,
  swap: { readonly partition: string; readonly staged: string },
): Promise<void> {
  const partition = join(root, swap.partition);
  const staged = join(root, swap.staged);
  const aside = `${staged}-old`;
  const added = new Set(entry.add.map((f) => basename(f.path)));
  const replaced = new Set(entry.remove.map((p) => basename(p)));
  const stagedNames = await readdir(staged).catch(() => [] as string[]);
  if (stagedNames.some((n) => added.has(n))) {
    // Not swapped yet. Every file the compaction does not replace gets a hard link in the new
    // directory first, so the swap alone makes the partition complete: a kill right after it
    // leaves nothing to move back for a reader to miss.
    const inStaged = new Set(stagedNames);
    const live = await readdir(partition, { withFileTypes: true }).catch(() => undefined);
    for (const e of live ?? []) {
      if (!e.isFile() || replaced.has(e.name) || inStaged.has(e.name)) continue;
      await link(join(partition, e.name), join(staged, e.name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST' && err.code !== 'ENOENT') throw err;
      });
    }
    if (live !== undefined) await exchangePaths(partition, staged, aside);
    else {
      await makeDirectory(dirname(partition));
      await rename(staged, partition);
    }
  }
  for (const old of [staged, aside]) {
    const names = await readdir(old).catch(() => undefined);
    if (names === undefined) continue;
    // What is left to move back: files published into the old directory between the links and the
    // swap by a writer that does not commit (depth capture), and directories of another layout.
    const present = new Set(await readdir(partition));
    for (const name of names)
      if (!replaced.has(name) && !present.has(name)) await rename(join(old, name), join(partition, name));
    await rm(old, { recursive: true, force: true });
  }
  await syncDirectory(partition);
}
