// Also the entry point `@quoteflow/core/write-file-durably`, which the dataset writer's encoder
// threads load alone: it imports nothing relative, and uses erasable TypeScript only (tests load it
// from source through Node's type stripping).
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Options of {@link writeFileDurably}. */
export interface WriteFileDurablyOptions {
  /**
   * Where the contents are written and fsync'd before they are published at the path; on the same
   * filesystem (a staging directory, say). Created exclusively: a file already there is an error.
   * @defaultValue a hidden `.NAME.RANDOM.tmp` beside the path
   */
  readonly tempPath?: string;
  /**
   * Publish only when nothing is at the path yet (a hard link, not a rename), failing with the
   * `EEXIST` error otherwise: for a name two writers may race for (a commit log's next version).
   * @defaultValue false (the path is replaced)
   */
  readonly exclusive?: boolean;
}

/**
 * Writes `data` to `path` so that a reader, a restart after kill -9 or a power cut sees the old
 * contents or the new, never part of them, and once this resolves the new survive a crash: the
 * data goes to a temporary file (directories made as needed), which is fsync'd, then renamed over
 * `path` (or linked, `exclusive`), then the directory entry is fsync'd. The one durable write of
 * quoteflow: datasets, commit logs, sync state and reports all go through it.
 *
 * @param data - text (UTF-8) or bytes, written in order
 * @example
 * ```ts
 * await writeFileDurably('./data/state.json', JSON.stringify(state));
 * ```
 */
export async function writeFileDurably(
  path: string,
  data: string | Uint8Array | readonly Uint8Array[],
  options: WriteFileDurablyOptions = {},
): Promise<void> {
  const temp =
    options.tempPath ?? join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await createFile(temp);
  try {
    try {
      const parts =
        typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data instanceof Uint8Array ? [data] : data;
      for (const part of parts) {
        let off = 0;
        while (off < part.length) off += (await fh.write(part, off, part.length - off)).bytesWritten;
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (options.exclusive === true) {
      await makeDirectory(dirname(path));
      await link(temp, path);
      await rm(temp, { force: true });
      await syncDirectory(dirname(path));
    } else {
      await renameDurably(temp, path);
    }
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * Creates `path` for writing (it must not exist), making its directories. A directory another
 * process removes in between (a writer tidying an empty staging directory away at its close) is
 * made again: that race can be lost only while the other writer closes, so a few tries suffice.
 */
async function createFile(path: string): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      await makeDirectory(dirname(path));
      return await open(path, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw err;
    }
  }
}

/**
 * Renames a finished (fsync'd) file to `to`, making its directory as needed, and fsyncs that
 * directory: the rename itself is durable only once the directory entry is.
 */
export async function renameDurably(from: string, to: string): Promise<void> {
  const dir = dirname(to);
  await makeDirectory(dir);
  await rename(from, to);
  await syncDirectory(dir);
}

/**
 * `mkdir -p` that fails instead of hanging: Node's recursive mkdir never returns where mkdir
 * answers ENOENT under a parent that exists (procfs, `/proc/x`), so each level is made once and a
 * level that still cannot be made is an error.
 */
export async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error;
  }
  await makeDirectory(dirname(dir));
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Fsyncs a directory, so the entries made, renamed or removed in it survive a crash. */
export async function syncDirectory(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
