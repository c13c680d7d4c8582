import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { DatasetLog } from '@quoteflow/sinks';

/**
 * The kline files the dataset's commit log names that are gone from `dir` (deleted, lost with a
 * disk): relative paths, sorted. A file committed but not yet published (still staged after a crash;
 * the next writer publishes it) is not missing. No request, nothing written.
 *
 * @example
 * ```ts
 * for (const path of await missingCommittedFiles('./data')) console.warn(`missing: ${path}`);
 * ```
 */
export async function missingCommittedFiles(dir: string): Promise<string[]> {
  const log = await DatasetLog.open(dir, 'kline');
  const absent = async (paths: Iterable<string>): Promise<string[]> => {
    const out: string[] = [];
    for (const path of paths) {
      const file = log.files.get(path);
      if (file === undefined || (await exists(join(dir, path)))) continue;
      if (file.staged !== undefined && (await exists(join(dir, file.staged)))) continue;
      out.push(path);
    }
    return out;
  };
  const candidates = await absent(log.files.keys());
  if (candidates.length === 0) return [];
  // A writer beside this (a checkpoint being published, a compaction's swap) moves files: what the
  // log, read again, still names and is still not there is missing.
  await log.refresh();
  return (await absent(candidates)).sort();
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
