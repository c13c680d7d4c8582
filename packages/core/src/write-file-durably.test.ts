import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renameDurably, writeFileDurably } from './write-file-durably.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-durable-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeFileDurably', () => {
  it('replaces a file and leaves no temporary file beside it', async () => {
    const path = join(dir, 'state.json');
    await writeFileDurably(path, 'old');
    await writeFileDurably(path, 'new');
    expect(await readFile(path, 'utf8')).toBe('new');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('makes missing directories and writes byte parts in order', async () => {
    const path = join(dir, 'a', 'b', 'file.bin');
    await writeFileDurably(path, [Uint8Array.of(1, 2), Uint8Array.of(3)], {
      tempPath: join(dir, 'staging', 'x.tmp'),
    });
    expect([...(await readFile(path))]).toEqual([1, 2, 3]);
    expect(await readdir(join(dir, 'staging'))).toEqual([]);
  });

  it('publishes an exclusive file only where nothing is, failing with EEXIST and keeping the first', async () => {
    const path = join(dir, '00000000000000000001.json');
    await writeFileDurably(path, 'first', { exclusive: true });
    await expect(writeFileDurably(path, 'second', { exclusive: true })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(await readFile(path, 'utf8')).toBe('first');
    expect(await readdir(dir)).toEqual(['00000000000000000001.json']);
  });

  it('refuses a temporary path that exists (another writer’s) and leaves it alone', async () => {
    const temp = join(dir, 'busy.tmp');
    await writeFile(temp, 'theirs');
    await expect(writeFileDurably(join(dir, 'out'), 'mine', { tempPath: temp })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(await readFile(temp, 'utf8')).toBe('theirs');
  });
});

describe('renameDurably', () => {
  it('moves a file into a directory it makes', async () => {
    await writeFile(join(dir, 'f'), 'x');
    await renameDurably(join(dir, 'f'), join(dir, 'p', 'q', 'f'));
    expect(await readFile(join(dir, 'p', 'q', 'f'), 'utf8')).toBe('x');
  });
});
