import { compactDataset, DATASET_KINDS, type CompactedPartition, type DatasetKind } from '@quoteflow/sinks';
import { summarizeKlineFile } from '@quoteflow/sinks/internal';

/** Options of {@link compactDatasets}. */
export interface CompactDatasetsOptions {
  /** The dataset root `DIR`. */
  readonly dir: string;
  /** @defaultValue every dataset: kline, depth, suspension */
  readonly datasets?: readonly DatasetKind[];
  /** @defaultValue `COMPACTED_FILE_MAX_ROWS` (4 Mi rows) */
  readonly maxRowsPerFile?: number;
  /** Give up waiting for the publish lock after this long (`QF_LOCKED`). @defaultValue 60,000 ms */
  readonly lockTimeoutMs?: number;
  readonly onPartition?: (dataset: DatasetKind, result: CompactedPartition) => void;
}

/**
 * Compacts the datasets under `dir` (see `compactDataset`), committing to each dataset's log; K-line
 * files that no commit named yet are read for their series' watermarks first, so a sync that
 * starts afterwards knows what they hold without reading them.
 */
export async function compactDatasets(
  options: CompactDatasetsOptions,
): Promise<{ dataset: DatasetKind; result: CompactedPartition }[]> {
  const out: { dataset: DatasetKind; result: CompactedPartition }[] = [];
  for (const dataset of options.datasets ?? DATASET_KINDS) {
    const results = await compactDataset({
      dir: options.dir,
      dataset,
      ...(options.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: options.maxRowsPerFile }),
      ...(options.lockTimeoutMs === undefined ? {} : { lock: { timeoutMs: options.lockTimeoutMs } }),
      ...(dataset === 'kline' ? { summarize: (rel: string) => summarizeKlineFile(options.dir, rel) } : {}),
      onPartition: (r) => options.onPartition?.(dataset, r),
    });
    for (const result of results) out.push({ dataset, result });
  }
  return out;
}
