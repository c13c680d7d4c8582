import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { unpublishedStaged } from './unpublished-staged.js';

/** The staging directory under a dataset root (contract.md: `DIR/.staging/`). */
export const STAGING_DIR = '.staging';

const HOST = hostname().replaceAll('~', '_');

/** A random id per writer instance, so two writers (or a restart) never produce the same name. */
export function newWriterId(): string {
  return randomBytes(4).toString('hex');
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/**
 * A unique file name that sorts by creation time:
 * `part-20260121T231512345Z-<writer id>-000001.parquet`.
 */
export function partFileName(nowMs: number, writerId: string, seq: number, ext: string): string {
  const d = new Date(nowMs);
  const stamp =
    `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}${pad(d.getUTCMilliseconds(), 3)}Z`;
  return `part-${stamp}-${writerId}-${pad(seq, 6)}.${ext}`;
}

/** The staging path of a file: owner host and pid in the name, so cleanup can tell stale from live. */
export function stagingPathFor(dir: string, fileName: string): string {
  return join(dir, STAGING_DIR, `${HOST}~${process.pid}~${fileName}.tmp`);
}

/** Whether a process of this host is alive (`kill(pid, 0)`; EPERM: alive, owned by another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes leftovers of crashed writers from `DIR/.staging/`: `.tmp` files of a dead process on this
 * host (a staged `.ready.tmp` one too, unless a version committed but not yet published names it:
 * the table's next writer moves that one into place), and any `.tmp` file older than `staleMs`
 * (another host's crash, an unparsable name, or a staged `.ready.tmp` file no commit named).
 * Files of live writers (this process included) are left alone. Returns the names removed.
 */
export async function cleanStaging(dir: string, staleMs: number, nowMs: number): Promise<string[]> {
  const staging = join(dir, STAGING_DIR);
  let names: string[];
  try {
    names = await readdir(staging);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  let committed: Set<string> | undefined;
  for (const name of names) {
    if (!name.endsWith('.tmp')) continue;
    const [host, pidText] = name.split('~');
    const pid = Number(pidText);
    const dead =
      host === HOST && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid);
    // A `.ready.tmp` file waits for its commit, which a crashed writer may have made: the next
    // publisher moves it into place. One no unpublished version names was never committed.
    let stale = dead;
    if (dead && name.endsWith('.ready.tmp')) {
      committed ??= await unpublishedStaged(dir);
      stale = !committed.has(`${STAGING_DIR}/${name}`);
    }
    if (!stale) {
      const st = await stat(join(staging, name)).catch(() => undefined);
      stale = st !== undefined && nowMs - st.mtimeMs > staleMs;
    }
    if (stale) {
      await rm(join(staging, name), { recursive: true, force: true });
      removed.push(name);
    }
  }
  return removed;
}

/**
 * Removes `DIR/.staging/` when it is empty, so a clean run leaves no empty directory behind in the
 * output; a file another writer stages keeps it (`rmdir` removes empty directories only). A writer
 * that makes it again meanwhile is fine: core's `writeFileDurably` makes the directory anew when it
 * vanished under it. Tidying up never fails a run: an error here changes no data.
 */
export async function removeEmptyStaging(dir: string): Promise<void> {
  await rmdir(join(dir, STAGING_DIR)).catch(() => undefined);
}
