import { mkdtemp, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { DatasetKind } from '@quoteflow/sinks';
import { UsageError } from './usage-error.js';

/**
 * Fails (exit 2) before any request or file when `--out` cannot hold a dataset: it exists and is
 * not a directory, a parent is a file, or the nearest existing directory is not writable (a
 * read-only directory or filesystem, `/proc`). Writability is probed with a directory made and
 * removed at once, non-recursively: Node's recursive mkdir never returns where mkdir answers
 * ENOENT under an existing parent (procfs), which is how `--out /proc/x` used to spin. An
 * `s3://bucket/prefix` is opened and probed instead (exit 1 when it cannot be committed to).
 * Then the tables of `datasets` the command writes are read: one of a newer quoteflow format than
 * this release's is exit 2 (`FormatVersionError`), naming its version and this release's.
 */
export async function checkOutDir(
  out: string,
  cwd = process.cwd(),
  flag = '--out',
  datasets: readonly DatasetKind[] = [],
): Promise<void> {
  if ((await checkOutScheme(out, flag)) === 's3') return checkS3Out(out, datasets);
  await checkLocalOut(out, cwd, flag);
  if (datasets.length === 0) return;
  const { checkTableFormats } = await import('@quoteflow/sinks/internal');
  await checkTableFormats(resolve(cwd, out), datasets);
}

/** {@link checkOutDir} of a local directory: it is one, or can be made, and is writable. */
async function checkLocalOut(out: string, cwd: string, flag: string): Promise<void> {
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
 * Fails (exit 2) when `--out` names a URL other than `s3://bucket/prefix` (a path such as
 * `gs://bucket/ds` would otherwise become a local folder named `gs:`), or an S3 URL without a
 * valid bucket, naming the flag. Returns which kind of destination it is.
 */
export async function checkOutScheme(out: string, flag = '--out'): Promise<'local' | 's3'> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(out)?.[1];
  if (scheme === undefined) return 'local';
  if (scheme.toLowerCase() !== 's3')
    throw new UsageError(
      `${flag} ${JSON.stringify(out)}: unknown scheme "${scheme}://"; give a local directory or s3://bucket/prefix`,
    );
  const { parseS3Url } = await import('@quoteflow/sinks/internal');
  const at = parseS3Url(out);
  if ('error' in at) throw new UsageError(`${flag} ${JSON.stringify(out)}: ${at.error}`);
  return 's3';
}

/**
 * Opens an `s3://` destination once before any request to the service: the SDK's configuration,
 * the server's answer and its enforcement of conditional writes (`If-None-Match`) are checked
 * (`QF_OBJECT_STORE`, exit 1, naming the endpoint and bucket), and the format of the tables of
 * `datasets`.
 */
async function checkS3Out(out: string, datasets: readonly DatasetKind[]): Promise<void> {
  const { openStore, checkTableFormats } = await import('@quoteflow/sinks/internal');
  const opened = await openStore(out);
  try {
    await checkTableFormats(opened, datasets);
  } finally {
    await opened.close();
  }
}

/** The dataset root a sink is given: an `s3://` URL as it is, a local path resolved against `cwd`. */
export function datasetDir(cwd: string, out: string): string {
  return /^s3:\/\//i.test(out) ? out : resolve(cwd, out);
}

/**
 * The dataset `--out` of a command that reads it (inspect, report): a local directory as it is
 * (exit 2 when there is none); on S3 a local copy of each table's current version (`openLocalCopy`),
 * removed by `close()`.
 */
export async function openOutForReading(
  out: string,
  cwd: string,
): Promise<{ dir: string; close: () => Promise<void> }> {
  if ((await checkOutScheme(out)) === 's3') {
    const { openLocalCopy } = await import('@quoteflow/sinks/internal');
    return openLocalCopy(out);
  }
  const dir = resolve(cwd, out);
  if ((await stat(dir).catch(() => undefined))?.isDirectory() !== true)
    throw new UsageError(`--out ${out}: no such directory`);
  return { dir, close: async () => undefined };
}
