import { defer, exhaustMap, mergeMap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { clockScheduler } from '../clock.js';
import type { Bar } from '../domain.js';
import type { BatchKlineGroup } from '../endpoints/batch-kline.js';
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
  if (!Array.isArray(options.groups) || options.groups.length === 0)
    throw new InvalidOptionError('groups', 'pollLatestBars: "groups" must be a non-empty array');
  checkIntervalMs('intervalMs', options.intervalMs);
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('latest-bars');
    const requests = Math.ceil(options.groups.length / client.limits.batchKlineGroups);
    const intervalMs = options.intervalMs ?? defaultPollIntervalMs(client.limits, 'batch-kline', requests, 1);
    return timer(0, intervalMs, options.scheduler ?? clockScheduler(client.clock)).pipe(
      exhaustMap(() =>
        fromAbortable((signal) => client.batchKline(options.groups, { signal, priority: 'live', sourceId })),
      ),
      mergeMap((groups) => groups.flatMap((g) => g.bars)),
    );
  });
}
