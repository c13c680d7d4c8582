import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSinkError } from '../file-sink-error.js';
import { isS3Url, parseS3Url, type ObjectStore } from './object-store.js';

/** A dataset destination opened: its store and, on object storage, a local scratch directory. */
export interface OpenedStore {
  /** The object store (S3), or `undefined` for a local directory (the dataset code's own path). */
  readonly store: ObjectStore | undefined;
  /** The local directory files are written in: the dataset root, or the scratch directory for S3. */
  readonly root: string;
  /** Removes the scratch directory and releases the client. */
  close(): Promise<void>;
}

/**
 * Opens `dir`: a local directory as it is, an `s3://bucket/prefix` through the AWS SDK (imported
 * only here, only then), checked to enforce conditional writes, with a scratch directory under the
 * system's temporary directory for files being built before their upload.
 * @throws FileSinkError `QF_INVALID_OPTION` for another scheme or a bad S3 URL, `QF_OBJECT_STORE`
 * when the server cannot be reached or does not enforce `If-None-Match`.
 */
export async function openStore(dir: string): Promise<OpenedStore> {
  if (!isS3Url(dir)) {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(dir)?.[1];
    if (scheme !== undefined)
      throw new FileSinkError(
        'QF_INVALID_OPTION',
        `${JSON.stringify(dir)}: unknown scheme "${scheme}://" (a local directory or s3://bucket/prefix)`,
      );
    return { store: undefined, root: dir, close: async () => undefined };
  }
  const at = parseS3Url(dir);
  if ('error' in at) throw new FileSinkError('QF_INVALID_OPTION', `${JSON.stringify(dir)}: ${at.error}`);
  const { openS3Store } = await import('./s3-store.js');
  const store = await openS3Store(at);
  const root = await mkdtemp(join(tmpdir(), 'quoteflow-s3-'));
  return {
    store,
    root,
    close: async () => {
      store.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
