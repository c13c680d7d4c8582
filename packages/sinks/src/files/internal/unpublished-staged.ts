import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DATASET_KINDS } from '../dataset-columns.js';

const COMMIT = /^(\d{20})\.json$/;

/**
 * The staged paths (relative to `DIR`) that versions committed but not yet published name, over
 * every table under `DIR`: files a writer killed between its commit and its renames left in
 * `DIR/.staging/`, which the table's next writer moves into place. Anything else there of a dead
 * process was never committed and never will be.
 */
export async function unpublishedStaged(dir: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const kind of DATASET_KINDS) {
    const logDir = join(dir, kind, '_delta_log');
    const names = await readdir(logDir).catch(() => [] as string[]);
    if (names.length === 0) continue;
    const applied = Number(
      (await readFile(join(logDir, '.quoteflow-applied'), 'utf8').catch(() => '-1')).trim(),
    );
    for (const name of names) {
      const v = COMMIT.exec(name);
      if (v === null || !(Number(v[1]) > applied)) continue;
      const first = (await readFile(join(logDir, name), 'utf8').catch(() => '')).split('\n', 1)[0]!;
      let info: { staged?: Record<string, string>; swap?: { staged: string } } | undefined;
      try {
        info = (JSON.parse(first) as { commitInfo?: { quoteflow?: typeof info } }).commitInfo?.quoteflow;
      } catch {
        // Not a commit quoteflow can read: it names nothing of the staging directory.
      }
      for (const staged of Object.values(info?.staged ?? {})) out.add(staged);
      if (info?.swap !== undefined) out.add(info.swap.staged);
    }
  }
  return out;
}
