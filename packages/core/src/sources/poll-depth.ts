import { defer, exhaustMap, mergeMap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { clockScheduler } from '../clock.js';
import type { DepthTick } from '../domain.js';
import { InvalidOptionError } from '../errors.js';
import { defaultPollIntervalMs } from '../internal/default-poll-interval.js';
import { fromAbortable } from '../internal/from-abortable.js';
import { nextSourceId } from '../internal/next-source-id.js';
import type { SourceClient } from './source-client.js';

/** Options of {@link pollDepth}. */
export interface PollDepthOptions {
  readonly codes: readonly string[];
  /** Time between polls; default: what the plan sustains for this many codes, at least {@link POLL_DEPTH_DEFAULTS}. */
  readonly intervalMs?: number;
  /** Id for the scheduler's fair sharing; default a fresh `depth-N`. */
  readonly sourceId?: string;
  /** RxJS scheduler for the poll timer (tests pass a TestScheduler). @defaultValue `clockScheduler(client.clock)` */
  readonly scheduler?: SchedulerLike;
}

/** Defaults of {@link PollDepthOptions}. */
export const POLL_DEPTH_DEFAULTS = { minIntervalMs: 1_000 } as const;

/** Checks a poll interval option, naming it. */
export function checkIntervalMs(option: string, value: number | undefined, minMs = 1): void {
  if (value !== undefined && (!Number.isFinite(value) || value < minMs)) {
    throw new InvalidOptionError(
      option,
      `"${option}" must be a number of ms >= ${minMs}, got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * The latest order book of every code, polled on the client's clock: one poll at subscribe, then
 * one every `intervalMs`; a poll still in flight when the next is due makes that one skip. Emits each
 * tick as it comes (repeats included: pipe through `dedupeBySeq()` to drop them), priority
 * `'live'`. Cold; unsubscribing aborts the request in flight. A failed poll (after the
 * client's retries) errors the stream with its typed error.
 *
 * @example
 * pollDepth(client, { codes: ['AAPL.US', 'BTCUSDT'], intervalMs: 2_000 }).subscribe((tick) => console.log(tick.code, tick.bids[0]));
 */
export function pollDepth(client: SourceClient, options: PollDepthOptions): Observable<DepthTick> {
  if (!Array.isArray(options.codes) || options.codes.length === 0)
    throw new InvalidOptionError('codes', 'pollDepth: "codes" must be a non-empty array');
  checkIntervalMs('intervalMs', options.intervalMs);
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('depth');
    const requests = Math.ceil(new Set(options.codes).size / client.limits.codesPerRequest);
    const intervalMs =
      options.intervalMs ??
      defaultPollIntervalMs(client.limits, 'depth-tick', requests, POLL_DEPTH_DEFAULTS.minIntervalMs);
    return timer(0, intervalMs, options.scheduler ?? clockScheduler(client.clock)).pipe(
      exhaustMap(() =>
        fromAbortable((signal) => client.depth(options.codes, { signal, priority: 'live', sourceId })),
      ),
      mergeMap((ticks) => ticks),
    );
  });
}
