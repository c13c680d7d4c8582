import { defer, exhaustMap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { clockScheduler } from '../clock.js';
import type { Exchange, SuspensionRecord } from '../domain.js';
import { fromAbortable } from '../internal/from-abortable.js';
import { nextSourceId } from '../internal/next-source-id.js';
import { checkIntervalMs } from './poll-depth.js';
import type { SourceClient } from './source-client.js';

/** Options of {@link pollSuspensions}. */
export interface PollSuspensionsOptions {
  readonly exchange: Exchange;
  /** Time between polls, at least 60 s (spec: one suspension query per minute); default 60 s. */
  readonly intervalMs?: number;
  readonly sourceId?: string;
  /** RxJS scheduler for the poll timer (tests pass a TestScheduler). @defaultValue `clockScheduler(client.clock)` */
  readonly scheduler?: SchedulerLike;
}

/** Defaults of {@link PollSuspensionsOptions}. */
export const POLL_SUSPENSIONS_DEFAULTS = { intervalMs: 60_000, minIntervalMs: 60_000 } as const;

/**
 * The suspension records of one exchange, polled on the client's clock: emits the whole list (latest first) at
 * subscribe and then every `intervalMs` (never more than once a minute). Snapshots, so a caller
 * can diff them. Cold; unsubscribing aborts the query in flight; a failure errors the stream.
 *
 * @example
 * pollSuspensions(client, { exchange: 'nyse' }).subscribe((records) => console.log(records.length));
 */
export function pollSuspensions(
  client: SourceClient,
  options: PollSuspensionsOptions,
): Observable<readonly SuspensionRecord[]> {
  checkIntervalMs('intervalMs', options.intervalMs, POLL_SUSPENSIONS_DEFAULTS.minIntervalMs);
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId(`suspensions-${options.exchange}`);
    return timer(
      0,
      options.intervalMs ?? POLL_SUSPENSIONS_DEFAULTS.intervalMs,
      options.scheduler ?? clockScheduler(client.clock),
    ).pipe(
      exhaustMap(() =>
        fromAbortable((signal) =>
          client.suspensions(options.exchange, { signal, priority: 'live', sourceId }),
        ),
      ),
    );
  });
}
