import type { DatasetKind } from './dataset-columns.js';
import { DatasetLog } from './dataset-log.js';
import { openStore } from './storage/open-store.js';
import { checkOwners, untilFree } from './table-claims.js';
import type { TableClaimOptions } from './table-writer.js';

/** Options of {@link checkTableOwners}. */
export interface CheckTableOwnersOptions extends TableClaimOptions {
  /** The dataset root `DIR`, or `s3://bucket/prefix`. */
  readonly dir: string;
  readonly dataset: DatasetKind;
  /** The series a writer is about to claim (kline `CODE|K`, depth codes, suspension exchanges). */
  readonly series: readonly string[];
}

/**
 * Asks a table, without writing to it, whether another live writer owns some of `series`: for a
 * command that must fail (or wait) before it sends any request, ahead of the claim its sink makes.
 * Rejects with `TableOwnedError` (`QF_OWNED`, naming the table, the series and the writer) with
 * `ifOwned: 'fail'`; with `'wait'` reads the table again until they are free (saying so once to
 * `onWaiting`); resolves at once with `'take-over'`, and for a table that does not exist yet.
 *
 * @example
 * ```ts
 * await checkTableOwners({ dir: './data', dataset: 'kline', series: ['BTCUSDT|1'] });
 * ```
 */
export async function checkTableOwners(options: CheckTableOwnersOptions): Promise<void> {
  const { dir, dataset, series } = options;
  if (options.ifOwned === 'take-over' || series.length === 0) return;
  const opened = await openStore(dir);
  try {
    const log = await DatasetLog.open(opened.root, dataset, {
      ...(opened.store === undefined ? {} : { store: opened.store }),
    });
    let first = true;
    await untilFree(
      async () => {
        if (!first) await log.refresh();
        first = false;
        checkOwners(log, series, options.ifOwned);
      },
      log,
      options,
    );
  } finally {
    await opened.close();
  }
}
