import { seriesKey, type KlineType } from '@quoteflow/core';
import type { DatasetKind, IfOwned } from '@quoteflow/sinks';
import type { Logger } from 'pino';

/**
 * What a writer of the CLI does when another live writer owns one of its series: a cluster
 * worker takes over (its cluster's lease gave it the series), otherwise it fails, or with
 * `--wait-for-writer` (`files.waitForWriter`) waits.
 */
export function ifOwnedOf(waitForWriter: boolean | undefined, cluster: boolean): IfOwned {
  return cluster ? 'take-over' : waitForWriter === true ? 'wait' : 'fail';
}

/** A table a command will write and the series it will claim there, checked before any request. */
export interface TableToWrite {
  /** The dataset root (`datasetDir`). */
  readonly dir: string;
  readonly dataset: DatasetKind;
  readonly series: readonly string[];
  readonly ifOwned: IfOwned;
}

/** The series (`CODE|K`) of a K-line universe. */
export function klineSeriesOf(codes: readonly string[], klineTypes: readonly KlineType[]): string[] {
  return codes.flatMap((code) => klineTypes.map((k) => seriesKey(code, k)));
}

/**
 * Each table's series checked against the live writers its log records, before any request to
 * the service: one another live writer owns fails the command (`QF_OWNED`, exit 1, naming the
 * table, the series and that writer), or is waited for (said once on stderr).
 */
export async function checkTablesToWrite(
  tables: readonly TableToWrite[],
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  if (tables.length === 0) return;
  const { checkTableOwners } = await import('@quoteflow/sinks/internal');
  for (const t of tables)
    await checkTableOwners({
      dir: t.dir,
      dataset: t.dataset,
      series: t.series,
      ifOwned: t.ifOwned,
      signal,
      onWaiting: (message) => logger.warn({ table: t.dataset }, message),
    });
}
