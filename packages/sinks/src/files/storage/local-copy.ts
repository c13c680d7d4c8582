import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { makeDirectory } from '@quoteflow/core';
import { DATASET_KINDS } from '../dataset-columns.js';
import { DatasetLog } from '../dataset-log.js';
import { isS3Url } from './object-store.js';
import { openStore } from './open-store.js';

/** A local directory holding a dataset root's tables as of one moment (see {@link openLocalCopy}). */
export interface LocalCopy {
  readonly dir: string;
  /** Removes the copy (nothing for a local `dir`). */
  close(): Promise<void>;
}

/**
 * A local directory with the dataset root `dir`'s current files, for the readers that read a local
 * Hive layout (inspect, report): a local `dir` as it is; on S3 each table's current version
 * (the files its Delta log names, nothing uncommitted or removed) downloaded into a temporary
 * directory, without its log. Downloads the whole current version: for a large bucket, read it
 * with a Delta reader instead.
 */
export async function openLocalCopy(dir: string): Promise<LocalCopy> {
  if (!isS3Url(dir)) return { dir, close: async () => undefined };
  const opened = await openStore(dir);
  const copy = await mkdtemp(join(tmpdir(), 'quoteflow-s3-copy-'));
  try {
    const store = opened.store!;
    for (const dataset of DATASET_KINDS) {
      const log = await DatasetLog.open(opened.root, dataset, { store });
      for (const path of log.files.keys()) {
        const bytes = await store.read(path);
        if (bytes === undefined) continue;
        await makeDirectory(dirname(join(copy, path)));
        await writeFile(join(copy, path), bytes);
      }
    }
  } catch (err) {
    await rm(copy, { recursive: true, force: true });
    throw err;
  } finally {
    await opened.close();
  }
  return { dir: copy, close: () => rm(copy, { recursive: true, force: true }) };
}
