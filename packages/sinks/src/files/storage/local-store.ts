import { copyFile, readdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeDirectory, writeFileDurably } from '@quoteflow/core/internal';
import type { ObjectStore, StoredObject } from './object-store.js';

/**
 * A local directory as an {@link ObjectStore}: each write goes to a temporary file, is fsync'd and
 * renamed into place; `createExclusive` links it into place (`link()` fails if the name exists).
 * `list` reads the directory that holds the prefix (keys below it are not walked); sizes and times
 * only with `details` (a log directory holds many versions: one `stat` each would slow every refresh).
 */
export class LocalStore implements ObjectStore {
  readonly kind = 'local' as const;
  readonly location: string;

  constructor(readonly root: string) {
    this.location = root;
  }

  #path(key: string): string {
    return join(this.root, ...key.split('/'));
  }

  async read(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.#path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async list(prefix: string, startAfter?: string, details = false): Promise<StoredObject[]> {
    const slash = prefix.lastIndexOf('/');
    const dir = slash < 0 ? '' : prefix.slice(0, slash);
    const entries = await readdir(this.#path(dir), { withFileTypes: true }).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [];
        throw err;
      },
    );
    const out: StoredObject[] = [];
    for (const e of entries) {
      const key = dir === '' ? e.name : `${dir}/${e.name}`;
      if (!e.isFile() || !key.startsWith(prefix) || (startAfter !== undefined && key <= startAfter)) continue;
      if (!details) {
        out.push({ key, size: -1, lastModifiedMs: 0 });
        continue;
      }
      const st = await stat(this.#path(key)).catch(() => undefined);
      if (st !== undefined) out.push({ key, size: st.size, lastModifiedMs: st.mtimeMs });
    }
    return out.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  }

  async write(key: string, body: Uint8Array | string): Promise<void> {
    await writeFileDurably(this.#path(key), body);
  }

  async upload(key: string, localPath: string): Promise<void> {
    const to = this.#path(key);
    await makeDirectory(dirname(to));
    await copyFile(localPath, to);
  }

  async createExclusive(key: string, body: Uint8Array | string): Promise<boolean> {
    try {
      await writeFileDurably(this.#path(key), body, { exclusive: true });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await rm(this.#path(key), { force: true });
  }
}
