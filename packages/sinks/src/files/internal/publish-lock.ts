import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { open, readFile, rename, rm, stat } from 'node:fs/promises';
import { retryWithBudget } from '@quoteflow/core/internal';
import { FileSinkError } from '../file-sink-error.js';
import { isProcessAlive } from './staging.js';

const HOST = hostname();

interface LockBody {
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly expiresAtMs: number;
}

/** Options of {@link acquirePublishLock}. */
export interface PublishLockOptions {
  /** Give up (`QF_LOCKED`) after waiting this long (monotonic time) for a live holder. @defaultValue 60,000 ms */
  readonly timeoutMs?: number;
  /**
   * A holder that has not released the lock this long after taking it is presumed stuck (paused,
   * or crashed on another host) and its lock is broken. Publishing holds it for milliseconds.
   * @defaultValue 30,000 ms
   */
  readonly ttlMs?: number;
  /** Wall-clock time shared by every process on the dataset (epoch ms). */
  readonly now?: () => number;
}

/** A held lock: `release()` removes it if it is still ours. */
export interface PublishLock {
  release(): Promise<void>;
}

/**
 * An exclusive lock between processes (on this host and, over a shared filesystem, others) as a
 * file created with `O_EXCL`. A lock whose holder died on this host, or that outlived its `ttlMs`,
 * is broken by renaming it aside first, so two waiters never both remove a fresh lock.
 *
 * It serialises publishing into a dataset (a commit and the renames it implies, a compaction's
 * partition swap): the commit log itself needs no lock (each version is created exclusively), the
 * lock keeps file moves of two publishers from interleaving.
 */
export async function acquirePublishLock(
  path: string,
  options: PublishLockOptions = {},
): Promise<PublishLock> {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 30_000;
  const owner = `${HOST}~${process.pid}~${randomBytes(4).toString('hex')}`;
  const tryOnce = async (): Promise<PublishLock> => {
    for (;;) {
      const body: LockBody = { owner, host: HOST, pid: process.pid, expiresAtMs: now() + ttlMs };
      try {
        const fh = await open(path, 'wx');
        try {
          await fh.writeFile(JSON.stringify(body));
        } finally {
          await fh.close();
        }
        return { release: () => releaseIfOwned(path, owner) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readLock(path);
      if (held === 'gone') continue;
      if (!isStale(held, now(), ttlMs)) throw lockHeld(path, held);
      // Renaming is atomic: of several waiters that judged it stale, one moves it aside.
      const aside = `${path}.broken-${randomBytes(4).toString('hex')}`;
      try {
        await rename(path, aside);
        await rm(aside, { force: true });
      } catch {
        // another waiter broke it first
      }
    }
  };
  try {
    return await retryWithBudget(tryOnce, {
      budgetMs: options.timeoutMs ?? 60_000,
      baseDelayMs: 10,
      maxDelayMs: 100,
      retryable: (err) => err instanceof FileSinkError && err.code === 'QF_LOCKED',
    });
  } catch (err) {
    // Waited out: the lock's error, no longer worth retrying.
    if (err instanceof FileSinkError && err.code === 'QF_LOCKED')
      throw new FileSinkError('QF_LOCKED', err.message);
    throw err;
  }
}

/** The lock is held by a live holder: `QF_LOCKED`, retryable while the wait for it lasts. */
function lockHeld(path: string, held: LockBody | { unreadableSinceMs: number }): FileSinkError {
  const who = 'pid' in held ? `process ${held.pid} on ${held.host}` : 'another process';
  return new FileSinkError('QF_LOCKED', `the dataset's publish lock ${path} is held by ${who}`, {
    retryable: true,
  });
}

async function readLock(path: string): Promise<LockBody | 'gone' | { unreadableSinceMs: number }> {
  try {
    const text = await readFile(path, 'utf8');
    const body = JSON.parse(text) as Partial<LockBody>;
    if (typeof body.pid === 'number' && typeof body.host === 'string' && typeof body.expiresAtMs === 'number')
      return body as LockBody;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
  }
  // Created but not yet written (its holder is between open and write), or garbage.
  const st = await stat(path).catch(() => undefined);
  return st === undefined ? 'gone' : { unreadableSinceMs: st.mtimeMs };
}

function isStale(held: LockBody | { unreadableSinceMs: number }, nowMs: number, ttlMs: number): boolean {
  if ('unreadableSinceMs' in held) return nowMs - held.unreadableSinceMs > ttlMs;
  if (held.host === HOST && held.pid !== process.pid && !isProcessAlive(held.pid)) return true;
  return nowMs > held.expiresAtMs;
}

async function releaseIfOwned(path: string, owner: string): Promise<void> {
  const held = await readLock(path);
  if (held !== 'gone' && 'owner' in held && held.owner === owner) await rm(path, { force: true });
}
