import { stat } from 'node:fs/promises';
import { UsageError } from './usage-error.js';

/** Fails (exit 2) before anything is written if `--out` exists and is not a directory. */
export async function checkOutDir(out: string, flag = '--out'): Promise<void> {
  try {
    const s = await stat(out);
    if (!s.isDirectory())
      throw new UsageError(`${flag} ${JSON.stringify(out)} exists and is not a directory`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(`${flag} ${JSON.stringify(out)}: ${(err as Error).message}`);
  }
}
