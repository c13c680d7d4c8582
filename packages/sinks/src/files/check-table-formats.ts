import { DATASET_KINDS, type DatasetKind } from './dataset-columns.js';
import { DatasetLog } from './dataset-log.js';
import { openStore, type OpenedStore } from './storage/open-store.js';

/**
 * Reads the log of each dataset's Delta table under `dir` (a local directory or
 * `s3://bucket/prefix`, or a store opened with `openStore`) and rejects with a
 * `FormatVersionError` naming the table, its format version and this release's when one was
 * written in a newer quoteflow format; a table that does not exist yet holds nothing to refuse.
 * Writes nothing: what a command checks before its first request.
 *
 * @example
 * ```ts
 * await checkTableFormats('./data', ['kline']);
 * ```
 */
export async function checkTableFormats(
  dir: string | OpenedStore,
  datasets: readonly DatasetKind[] = DATASET_KINDS,
): Promise<void> {
  const opened = typeof dir === 'string' ? await openStore(dir) : dir;
  try {
    for (const dataset of datasets)
      await DatasetLog.open(opened.root, dataset, opened.store === undefined ? {} : { store: opened.store });
  } finally {
    if (typeof dir === 'string') await opened.close();
  }
}
