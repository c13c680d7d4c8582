// writeFileDurably against a staging directory that another writer removes (empty, at its close)
// between the moment it is made and the moment the file is created there: `open` is wrapped so
// the removal happens exactly in that window, every time it is armed.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileDurably } from './write-file-durably.js';

/** How many times the next `open`s find their directory removed just before them. */
const removals = vi.hoisted(() => ({ left: 0 }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  return {
    ...fs,
    open: async (...args: Parameters<typeof fs.open>) => {
      if (removals.left > 0) {
        removals.left--;
        await fs.rmdir(dirname(String(args[0])));
      }
      return fs.open(...args);
    },
  };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-durable-race-'));
});
afterEach(async () => {
  removals.left = 0;
  await rm(dir, { recursive: true, force: true });
});

describe('writeFileDurably beside a writer that tidies the staging directory away', () => {
  it('makes the directory again when it vanished before the file was created, a few times at most', async () => {
    removals.left = 1;
    const path = join(dir, 'kline', 'part-1.ndjson');
    await writeFileDurably(path, 'row\n', { tempPath: join(dir, '.staging', 'part-1.tmp') });
    expect(removals.left).toBe(0);
    expect(await readFile(path, 'utf8')).toBe('row\n');
    expect(await readdir(join(dir, '.staging'))).toEqual([]);
    // Where the directory cannot be kept at all, it still fails, naming ENOENT.
    removals.left = 100;
    await expect(
      writeFileDurably(join(dir, 'kline', 'part-2.ndjson'), 'row\n', {
        tempPath: join(dir, '.staging', 'part-2.tmp'),
      }),
    ).rejects.toMatchObject({ code: 'ENOENT' });
    expect(removals.left).toBe(97);
  });
});
