import { defer, exhaustMap, from, map, mergeMap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { clockScheduler } from '../clock.js';
import type { Bar } from '../domain.js';
import type { BatchKlineGroup, BatchKlineGroupResult } from '../endpoints/batch-kline.js';
import { FAMILIES } from '../markets.js';
import { InvalidOptionError } from '../errors.js';
import { defaultPollIntervalMs } from '../internal/default-poll-interval.js';
import { fromAbortable } from '../internal/from-abortable.js';
import { nextSourceId } from '../internal/next-source-id.js';
import { checkIntervalMs } from './poll-depth.js';
import type { SourceClient } from './source-client.js';

/** Options of {@link pollLatestBars}. */
export interface PollLatestBarsOptions {
  /** Groups (code + K-line type); packed to the plan's group cap per request by the client. */
  readonly groups: readonly BatchKlineGroup[];
  /** Time between polls; default: the plan's `/batch-kline` interval times the requests one poll takes. */
  readonly intervalMs?: number;
  readonly sourceId?: string;
  /** RxJS scheduler for the poll timer (tests pass a TestScheduler). @defaultValue `clockScheduler(client.clock)` */
  readonly scheduler?: SchedulerLike;
}

/**
 * The latest bars (the forming one and the one before) of every group, polled through
 * `/batch-kline` on the client's clock: one poll at subscribe, then one every `intervalMs` (a poll
 * still in flight makes the next skip). Each poll emits every group's bars, oldest first within a group, so
 * the same bar comes again with later values while it forms: merge with `mergeBars()`.
 * Priority `'live'`. Cold; unsubscribing aborts the request in flight; a failed poll errors
 * the stream with its typed error.
 *
 * @example
 * pollLatestBars(client, { groups: [{ code: 'BTCUSDT', klineType: 1 }] }).subscribe((bar) => console.log(bar.tsMs, bar.close));
 */
export function pollLatestBars(client: SourceClient, options: PollLatestBarsOptions): Observable<Bar> {
  return pollLatestBatches(client, options).pipe(mergeMap((batch) => batch.results.flatMap((g) => g.bars)));
}

/** One answer of {@link pollLatestBatches}: one `/batch-kline` request's groups. */
export interface LatestBarsBatch {
  readonly type: 'latest-bars-batch';
  /** The groups of this request, in the order asked; each group's bars oldest first. */
  readonly results: readonly BatchKlineGroupResult[];
  /** Poll number, from 0. */
  readonly cycle: number;
  /** Whether this is the last answer of its poll (every group of the poll has now been answered). */
  readonly lastOfCycle: boolean;
  /** Clock time from the poll's start to this answer. */
  readonly cycleDurationMs: number;
}

/**
 * Like {@link pollLatestBars}, but one emission per `/batch-kline` request as soon as it answers
 * (groups split by family and packed to the plan's group cap), so a large universe's first
 * requests reach the pipeline without waiting for the whole poll. Same polling, priority and
 * errors as {@link pollLatestBars}.
 *
 * @example
 * pollLatestBatches(client, { groups }).subscribe((b) => b.lastOfCycle && console.log('poll', b.cycle, 'done'));
 */
export function pollLatestBatches(
  client: SourceClient,
  options: PollLatestBarsOptions,
): Observable<LatestBarsBatch> {
  if (!Array.isArray(options.groups) || options.groups.length === 0)
    throw new InvalidOptionError('groups', 'pollLatestBars: "groups" must be a non-empty array');
  checkIntervalMs('intervalMs', options.intervalMs);
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('latest-bars');
    const cap = client.limits.batchKlineGroups;
    const chunks: BatchKlineGroup[][] = [];
    for (const family of FAMILIES) {
      const mine = options.groups.filter((g) => client.familyOf(g.code) === family);
      for (let i = 0; i < mine.length; i += cap) chunks.push(mine.slice(i, i + cap));
    }
    const intervalMs =
      options.intervalMs ?? defaultPollIntervalMs(client.limits, 'batch-kline', chunks.length, 1);
    const clock = client.clock;
    return timer(0, intervalMs, options.scheduler ?? clockScheduler(clock)).pipe(
      exhaustMap((cycle) => {
        const startedMs = clock.now();
        let answered = 0;
        return from(chunks).pipe(
          mergeMap((chunk) =>
            fromAbortable((signal) => client.batchKline(chunk, { signal, priority: 'live', sourceId })),
          ),
          map((results): LatestBarsBatch => ({
            type: 'latest-bars-batch',
            results,
            cycle,
            lastOfCycle: ++answered === chunks.length,
            cycleDurationMs: clock.now() - startedMs,
          })),
        );
      }),
    );
  });
}
