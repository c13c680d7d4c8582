import { monotonicClock, retryWithBudget } from '@quoteflow/core/internal';
import type { DatasetKind } from './dataset-columns.js';
import type { DatasetLog } from './dataset-log.js';
import { FileSinkError } from './file-sink-error.js';
import { thisProcess, writerVerdict } from './internal/writer-liveness.js';
import type { TableClaimOptions, TableWriter } from './table-writer.js';

/** How often a claim that waits for another writer reads the log again, at most and at least. */
const POLL_MIN_MS = 200;
const POLL_MAX_MS = 2_000;
/** Series a message names before it counts the rest. */
const NAMED = 3;

/**
 * The series of `series` that another live writer owns, by writer (see {@link writerVerdict});
 * none with `'take-over'`.
 */
export function liveOwners(
  log: DatasetLog,
  series: readonly string[],
  ifOwned: TableClaimOptions['ifOwned'] = 'fail',
): Map<TableWriter, string[]> {
  const out = new Map<TableWriter, string[]>();
  if (ifOwned === 'take-over') return out;
  const verdicts = new Map<string, boolean>();
  for (const s of new Set(series)) {
    const id = log.owners.get(s);
    if (id === undefined || id === log.writerId) continue;
    const w = log.writers.get(id);
    // An owner without a record of its writer (a log edited by hand): nobody to wait for.
    if (w === undefined) continue;
    let live = verdicts.get(id);
    if (live === undefined) verdicts.set(id, (live = writerVerdict(w).live));
    if (!live) continue;
    const list = out.get(w);
    if (list === undefined) out.set(w, [s]);
    else list.push(s);
  }
  return out;
}

/** `A, B, C and 7 more (10 series)`, or the series themselves when few. */
export function nameSeries(series: readonly string[]): string {
  if (series.length <= NAMED) return series.join(', ');
  return `${series.slice(0, NAMED).join(', ')} and ${series.length - NAMED} more (${series.length} series)`;
}

/** A writer in words: `host h1, pid 4242, writing since …Z, renewed 12 s ago, quoteflow sync`. */
export function describeWriter(w: TableWriter, wallNowMs = Date.now()): string {
  const ago = Math.max(0, Math.round((wallNowMs - w.renewedMs) / 1000));
  const self = w.host === thisProcess().host && w.pid === process.pid ? ' (this process)' : '';
  return [
    `host ${w.host}`,
    `pid ${w.pid}${self}`,
    `writing since ${new Date(w.sinceMs).toISOString()}`,
    `renewed ${ago} s ago`,
    ...(w.command === undefined ? [] : [w.command]),
  ].join(', ');
}

/** The table's series other live writers own, in words. */
function ownedMessage(log: DatasetLog, owned: Map<TableWriter, string[]>): string {
  const parts = [...owned].map(
    ([w, series]) =>
      `${nameSeries(series)} ${series.length === 1 ? 'is' : 'are'} written by another live writer (${describeWriter(w)})`,
  );
  return `table ${log.table}: ${parts.join('; ')}`;
}

/**
 * A claim refused because another live writer owns some of the series (`QF_OWNED`): the message
 * names the table, the series (the first few and their count) and each writer (host, pid, since
 * when, its last renewal).
 */
export class TableOwnedError extends FileSinkError {
  /** The table (its directory or `s3://` URL). */
  readonly table: string;
  readonly dataset: DatasetKind;
  /** Per live writer, the series it owns of those claimed. */
  readonly owners: ReadonlyMap<TableWriter, readonly string[]>;

  constructor(log: DatasetLog, owners: Map<TableWriter, string[]>) {
    super(
      'QF_OWNED',
      `${ownedMessage(log, owners)}: stop that writer first, or pass --wait-for-writer (the library's ifOwned: 'wait') to wait until it stops or its lease runs out`,
    );
    this.table = log.table;
    this.dataset = log.dataset;
    this.owners = owners;
  }
}

/** Throws {@link TableOwnedError} when another live writer owns some of `series` (unless taking over). */
export function checkOwners(
  log: DatasetLog,
  series: readonly string[],
  ifOwned: TableClaimOptions['ifOwned'],
): void {
  const owned = liveOwners(log, series, ifOwned);
  if (owned.size > 0) throw new TableOwnedError(log, owned);
}

/**
 * Claims `series` for `log`'s writer in a commit of its own (`domainMetadata`
 * `quoteflow.owner.<series>` naming it, and its `quoteflow.writer.<id>` record), judged against
 * the log the commit builds on: refused when another live writer owns one (`ifOwned: 'fail'`), or
 * waited for, reading the log again until that writer released them or its lease ran out
 * (`'wait'`), or taken at once (`'take-over'`). Series this writer owns already are not claimed
 * again; resolves once the claim is committed (the log then holds what the previous owner
 * committed: resume from its watermarks).
 */
export async function claimSeries(
  log: DatasetLog,
  series: readonly string[],
  options: TableClaimOptions = {},
): Promise<void> {
  const ifOwned = options.ifOwned ?? 'fail';
  const wanted = [...new Set(series)];
  await untilFree(
    () =>
      log.transaction(async (tx) => {
        if (wanted.every((s) => log.owners.get(s) === log.writerId)) return;
        await tx.commit({
          operation: 'claim',
          add: [],
          claim: wanted,
          precondition: () => checkOwners(log, wanted, ifOwned),
        });
      }),
    log,
    options,
  );
}

/**
 * Runs `attempt` until it does not throw {@link TableOwnedError}: at once with `ifOwned: 'fail'`
 * (the error is thrown), or again after a pause with `'wait'` (reading the log again is the
 * attempt's), saying so once. The wait is core's `retryWithBudget` on the monotonic clock, paced
 * by the owners' leases; it has no budget by design: the caller asked to wait until the owner
 * stops or its lease runs out (which a lease bounds unless the owner keeps renewing it), and
 * `signal` stops it.
 */
export async function untilFree(
  attempt: () => Promise<void>,
  log: DatasetLog,
  options: TableClaimOptions,
): Promise<void> {
  await retryWithBudget(attempt, {
    budgetMs: Number.POSITIVE_INFINITY,
    retryable: (err) => err instanceof TableOwnedError && options.ifOwned === 'wait',
    delayMs: (err) => {
      const leaseMs = Math.min(...[...(err as TableOwnedError).owners.keys()].map((w) => w.leaseMs));
      return Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, leaseMs / 10));
    },
    onRetry: (err, n) => {
      if (n === 1)
        options.onWaiting?.(
          `${ownedMessage(log, (err as TableOwnedError).owners as Map<TableWriter, string[]>)}: waiting until it stops or its lease runs out`,
        );
    },
    clock: monotonicClock,
    // Only a wait is stopped by it: failing or taking over at once never waits.
    ...(options.signal === undefined || options.ifOwned !== 'wait' ? {} : { signal: options.signal }),
  });
}

/**
 * Gives up this writer's claims of `series` (all of them, and its writer record, without
 * `series`) in a commit of its own; nothing when it holds none. Claims another writer took over
 * stay that writer's.
 */
export async function releaseSeries(log: DatasetLog, series?: readonly string[]): Promise<void> {
  await log.transaction(async (tx) => {
    const mine = [...log.owners].filter(
      ([s, id]) => id === log.writerId && (series === undefined || series.includes(s)),
    );
    if (mine.length === 0 && (series !== undefined || !log.writers.has(log.writerId))) return;
    await tx.commit({ operation: 'claim', add: [], release: series ?? 'all' });
  });
}

/**
 * A renewal of this writer's claims (its record rewritten with the next count) in a commit of
 * its own, when it holds claims and none of its commits renewed them for a third of its lease.
 */
export async function renewClaims(log: DatasetLog): Promise<void> {
  if (!log.renewalDue()) return;
  await log.transaction(async (tx) => {
    if (log.writers.has(log.writerId)) await tx.commit({ operation: 'claim', add: [] });
  });
}
