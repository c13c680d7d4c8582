import { mkdtemp, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/**
 * Fails (exit 2) before any request or file when `--out` cannot hold a dataset: it exists and is
 * not a directory, a parent is a file, or the nearest existing directory is not writable (a
 * read-only directory or filesystem, `/proc`). Writability is probed with a directory made and
 * removed at once, non-recursively: Node's recursive mkdir never returns where mkdir answers
 * ENOENT under an existing parent (procfs), which is how `--out /proc/x` used to spin.
 */
export async function checkOutDir(out: string, cwd = process.cwd(), flag = '--out'): Promise<void> {
  checkOutScheme(out, flag);
  const named = `${flag} ${JSON.stringify(out)}`;
  let existing = resolve(cwd, out);
  for (;;) {
    try {
      const s = await stat(existing);
      if (!s.isDirectory())
        throw new UsageError(
          existing === resolve(cwd, out)
            ? `${named} exists and is not a directory`
            : `${named}: ${existing} is not a directory`,
        );
      break;
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || dirname(existing) === existing)
        throw new UsageError(`${named}: ${(err as Error).message}`);
      existing = dirname(existing);
    }
  }
  try {
    await rmdir(await mkdtemp(join(existing, '.quoteflow-write-check-')));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${named} is not writable (${code} in ${existing}): pick a writable directory`);
  }
}

/**
 * Fails (exit 2) when `--out` names a URL (`scheme://…`) rather than a local directory: a path
 * such as `s3://bucket/ds` would otherwise become a local folder named `s3:`. Object storage
 * destinations are not available in this build, so every scheme is refused, naming the flag.
 */
export function checkOutScheme(out: string, flag = '--out'): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(out)?.[1];
  if (scheme === undefined) return;
  throw new UsageError(
    scheme.toLowerCase() === 's3'
      ? `${flag} ${JSON.stringify(out)}: object storage (s3://) is not supported by this build; give a local directory`
      : `${flag} ${JSON.stringify(out)}: unknown scheme "${scheme}://"; give a local directory`,
  );
}
