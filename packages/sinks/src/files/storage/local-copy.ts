import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { makeDirectory, runLimited } from '@quoteflow/core/internal';
import { DATASET_KINDS } from '../dataset-columns.js';
import { DatasetLog } from '../dataset-log.js';
import { FileSinkError } from '../file-sink-error.js';
import { isS3Url } from './object-store.js';
import { openStore } from './open-store.js';

/** Downloads in flight at once: a table's files are many and small, each a request's round trip. */
const DOWNLOADS_AT_ONCE = 8;

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
 * with a Delta reader instead. A file the log names that is not in the bucket is an error
 * (`QF_DATASET_LOG`, naming it): a copy without its rows would report them as missing data.
 */
export async function openLocalCopy(dir: string): Promise<LocalCopy> {
  if (!isS3Url(dir)) return { dir, close: async () => undefined };
  const opened = await openStore(dir);
  const copy = await mkdtemp(join(tmpdir(), 'quoteflow-s3-copy-'));
  try {
    const store = opened.store!;
    for (const dataset of DATASET_KINDS) {
      const log = await DatasetLog.open(opened.root, dataset, { store });
      await runLimited([...log.files.keys()], DOWNLOADS_AT_ONCE, async (path) => {
        const bytes = await store.read(path);
        if (bytes === undefined)
          throw new FileSinkError(
            'QF_DATASET_LOG',
            `${dataset} table at ${store.location}: version ${log.version} names ${path}, which is not there (deleted behind the log, or vacuumed while it was read)`,
          );
        await makeDirectory(dirname(join(copy, path)));
        await writeFile(join(copy, path), bytes);
      });
    }
  } catch (err) {
    await rm(copy, { recursive: true, force: true });
    throw err;
  } finally {
    await opened.close();
  }
  return { dir: copy, close: () => rm(copy, { recursive: true, force: true }) };
}
