import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `data` to `path` and fsyncs it. A new file is created exclusively (`wx`); with `replace`
 * it is written beside and renamed over, so a reader (or a restart after kill -9) sees the old
 * contents or the new, never part of them.
 */
export async function writeFileDurably(
  path: string,
  data: string,
  options: { replace?: boolean } = {},
): Promise<void> {
  const target =
    options.replace === true
      ? join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`)
      : path;
  const fh = await open(target, 'wx');
  try {
    await fh.writeFile(data, 'utf8');
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(target, { force: true });
    throw err;
  }
  await fh.close();
  if (target === path) return;
  try {
    await rename(target, path);
  } catch (err) {
    await rm(target, { force: true });
    throw err;
  }
}
