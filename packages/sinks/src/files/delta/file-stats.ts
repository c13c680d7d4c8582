import type { DatasetKind } from '../dataset-columns.js';
import { forEachDatasetRow } from '../read-dataset-rows.js';
import { StatsCollector, type DeltaStats } from './delta-actions.js';

/** Delta statistics of a Parquet file of `dataset` (path relative to `dir`), read from the file. */
export async function readFileStats(
  dir: string,
  relativePath: string,
  dataset: DatasetKind,
): Promise<DeltaStats> {
  const collector = new StatsCollector(dataset);
  await forEachDatasetRow(dir, relativePath, (row) => collector.add(row), collector.columns, 'parquet');
  return collector.stats();
}
