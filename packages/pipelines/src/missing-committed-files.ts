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
  const missing: string[] = [];
  for (const [path, file] of log.files) {
    if (await exists(join(dir, path))) continue;
    if (file.staged !== undefined && (await exists(join(dir, file.staged)))) continue;
    missing.push(path);
  }
  return missing.sort();
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
