import {
  defer,
  repeat,
  tap,
  exhaustMap,
  from,
  map,
  mergeMap,
  timer,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
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
  /**
   * Chooses, at each poll, which of `groups` to ask for and in what order (most urgent first; a
   * poll is packed in this order): a caller that knows when a group's bar can change (its market's
   * calendar) asks only for those. An empty choice makes no request. The next poll then starts
   * `intervalMs` after this one started, or, without `intervalMs`, after the time the plan needs
   * for this poll's requests (at least 1 s), so fewer groups are polled more often.
   */
  readonly selectGroups?: (nowMs: number) => readonly BatchKlineGroup[];
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
  if (options.selectGroups !== undefined) return pollSelectedBatches(client, options, options.selectGroups);
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('latest-bars');
    const chunks = packGroups(client, options.groups);
    const intervalMs =
      options.intervalMs ?? defaultPollIntervalMs(client.limits, 'batch-kline', chunks.length, 1);
    const clock = client.clock;
    return timer(0, intervalMs, options.scheduler ?? clockScheduler(clock)).pipe(
      exhaustMap((cycle) => requestPoll(client, chunks, cycle, sourceId)),
    );
  });
}

/** One poll: its requests at once (the scheduler paces them), one emission per answer. */
function requestPoll(
  client: SourceClient,
  chunks: readonly BatchKlineGroup[][],
  cycle: number,
  sourceId: string,
): Observable<LatestBarsBatch> {
  const startedMs = client.clock.now();
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
      cycleDurationMs: client.clock.now() - startedMs,
    })),
  );
}

/** Groups split by family (one request holds one family) and packed to the plan's cap, in order. */
function packGroups(client: SourceClient, groups: readonly BatchKlineGroup[]): BatchKlineGroup[][] {
  const cap = client.limits.batchKlineGroups;
  const chunks: BatchKlineGroup[][] = [];
  for (const family of FAMILIES) {
    const mine = groups.filter((g) => client.familyOf(g.code) === family);
    for (let i = 0; i < mine.length; i += cap) chunks.push(mine.slice(i, i + cap));
  }
  return chunks;
}

/** {@link pollLatestBatches} with `selectGroups`: each poll asks for the groups chosen then. */
function pollSelectedBatches(
  client: SourceClient,
  options: PollLatestBarsOptions,
  selectGroups: (nowMs: number) => readonly BatchKlineGroup[],
): Observable<LatestBarsBatch> {
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('latest-bars');
    const clock = client.clock;
    const scheduler = options.scheduler ?? clockScheduler(clock);
    let cycle = 0;
    let nextStartMs = 0;
    const poll = defer(() => {
      const startedMs = clock.now();
      const thisCycle = cycle++;
      const chunks = packGroups(client, selectGroups(startedMs));
      const gapMs =
        options.intervalMs ??
        defaultPollIntervalMs(client.limits, 'batch-kline', Math.max(1, chunks.length), 1_000);
      nextStartMs = startedMs + gapMs;
      let first = true;
      return requestPoll(client, chunks, thisCycle, sourceId).pipe(
        tap<LatestBarsBatch>(() => {
          // Paced from the first answer, not the start: a poll that waited for a slot another
          // process held moves its phase instead of meeting that process again next time.
          if (first) nextStartMs = clock.now() + gapMs;
          first = false;
        }),
      );
    });
    // The next poll starts gapMs after this one's first answer (or its start, without requests),
    // or as soon as it ends if it took longer (resubscribed, not nested: a day of polls holds no
    // chain of subscriptions).
    return poll.pipe(repeat({ delay: () => timer(Math.max(0, nextStartMs - clock.now()), scheduler) }));
  });
}
