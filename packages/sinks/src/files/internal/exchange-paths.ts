import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How two directories were swapped: in one step, or by two renames (a moment with neither). */
export type SwapMode = 'atomic' | 'two-renames';

const SOURCE = fileURLToPath(new URL('../../../native/exchange-paths.c', import.meta.url));

let helper: Promise<string | undefined> | undefined;

/**
 * The compiled `exchange-paths` helper (built once per source version into
 * `$XDG_CACHE_HOME/quoteflow/`, with the system's `cc`), or `undefined` where it cannot be built.
 * `QUOTEFLOW_NO_EXCHANGE=1` disables it (tests of the fallback).
 */
function exchangeHelper(): Promise<string | undefined> {
  if (process.env.QUOTEFLOW_NO_EXCHANGE === '1') return Promise.resolve(undefined);
  helper ??= (async () => {
    try {
      const source = await readFile(SOURCE);
      const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
      const cacheDir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'quoteflow');
      const binary = join(cacheDir, `exchange-paths-${hash}-${process.arch}`);
      try {
        await access(binary);
        return binary;
      } catch {
        // not built yet
      }
      await mkdir(cacheDir, { recursive: true });
      // Built under a temporary name and renamed, so two processes building at once never run half a file.
      const tmp = `${binary}.${process.pid}.tmp`;
      await run(process.env.CC ?? 'cc', ['-O2', '-o', tmp, SOURCE], { timeout: 60_000 });
      await rename(tmp, binary);
      return binary;
    } catch {
      return undefined;
    }
  })();
  return helper;
}

/**
 * Swaps two existing paths (directories here) on one filesystem. With Linux's
 * `renameat2(RENAME_EXCHANGE)` a reader listing either path sees the old or the new contents,
 * never neither; without it (no C compiler, another OS, a filesystem that refuses), `a` is moved to
 * `aside` and `b` to `a`: for a moment `a` does not exist (a reader sees no rows of it, never a
 * row twice), and `aside` holds what was `a`. Returns where the old contents of `a` ended up.
 */
export async function exchangePaths(
  a: string,
  b: string,
  aside: string,
): Promise<{ mode: SwapMode; oldContentsAt: string }> {
  const binary = await exchangeHelper();
  if (binary !== undefined) {
    try {
      await run(binary, [a, b], { timeout: 30_000 });
      return { mode: 'atomic', oldContentsAt: b };
    } catch (err) {
      if ((err as { code?: unknown }).code !== 3) throw err;
    }
  }
  await rename(a, aside);
  await rename(b, a);
  return { mode: 'two-renames', oldContentsAt: aside };
}
