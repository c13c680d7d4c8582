import { pollSuspensions, type Clock, type Exchange, type QuoteflowClient } from '@quoteflow/core';
import { POLL_SUSPENSIONS_DEFAULTS } from '@quoteflow/core/internal';
import { suspensionChanges, type SuspensionChange } from '@quoteflow/operators';
import type { KafkaSinkOptions, WrittenFile } from '@quoteflow/sinks';
import { filter, map, merge, tap } from 'rxjs';
import { checkIntervalMs, pollPipeline } from './internal/poll-pipeline.js';
import { retryTransient } from './internal/retry-transient.js';
import type { PipelineHandle } from './pipeline-handle.js';
import { PipelineError } from './pipeline-error.js';
import type { PipelineFilesOptions } from './pipeline-files-options.js';

/** Options of {@link suspensionWatch}. */
export interface SuspensionWatchOptions {
  readonly client: QuoteflowClient;
  readonly exchanges: readonly Exchange[];
  /**
   * Time between two polls of each exchange, at least 60 s (a shorter one is raised to it). The
   * plan allows one suspension query a minute over all exchanges; the client's scheduler spreads
   * the exchanges' polls to keep to it. @defaultValue 60,000 ms
   */
  readonly intervalMs?: number;
  /**
   * New and changed records to the suspension dataset (`DIR/suspension/exchange=E/…`); a file is
   * finished `maxFileAgeMs` after its first row (default 60 s) and on stop.
   */
  readonly files?: PipelineFilesOptions;
  /** New and changed records to `<prefix>.suspension`. */
  readonly kafka?: KafkaSinkOptions;
  /** Whether the first snapshot of each exchange reports every record as new. @defaultValue true */
  readonly emitInitial?: boolean;
  /** The clock of polls, retries and file ages. @defaultValue the client's clock */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  /** Every change: new, changed and removed (records that aged out of the service's year). */
  readonly onChange?: (change: SuspensionChange) => void;
  /** A poll failed (retried at the exchange's next poll), or `onChange` threw. */
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** Counts of a suspension watch. */
export interface SuspensionWatchSummary {
  readonly polls: number;
  readonly changes: number;
  /** Files written by this run: the newest 1,000. */
  readonly files: readonly WrittenFile[];
  /** Every file written by this run. */
  readonly fileCount: number;
}

/** Defaults of {@link SuspensionWatchOptions}. */
export const SUSPENSION_WATCH_DEFAULTS = { intervalMs: POLL_SUSPENSIONS_DEFAULTS.intervalMs } as const;

/**
 * Suspension watch, composed of the same public pieces a user would compose: per exchange, core's
 * `pollSuspensions` (the whole list every `intervalMs`, on the clock; the client's scheduler keeps
 * to one query a minute) into the `suspensionChanges` operator (only new, changed and removed
 * records); the exchanges merged, every change to `onChange`, and new and changed records to the
 * sinks' `writeDataset` and `toKafka` operators.
 *
 * A transient poll failure is reported to `onWarning` and that exchange's next poll goes ahead
 * (what it already knows is kept, so nothing is reported twice); a fatal one (refused token) ends
 * the watch: `done` rejects with it once the sinks flushed. `stop()` (or `signal`) completes the
 * sources, so every sink flushes and `done` resolves; a sink that fails rejects `done` with a
 * `QF_PIPELINE` error naming it.
 *
 * @example
 * ```ts
 * const watch = suspensionWatch({ client, exchanges: ['nyse', 'nasdaq'], emitInitial: false, onChange: (c) => alert(c) });
 * ```
 */
export function suspensionWatch(options: SuspensionWatchOptions): PipelineHandle<SuspensionWatchSummary> {
  const { client } = options;
  const exchanges = [...new Set(options.exchanges)];
  if (exchanges.length === 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', 'suspensionWatch: "exchanges" must not be empty');
  checkIntervalMs('suspensionWatch', options.intervalMs);
  const intervalMs = Math.max(
    options.intervalMs ?? SUSPENSION_WATCH_DEFAULTS.intervalMs,
    POLL_SUSPENSIONS_DEFAULTS.minIntervalMs,
  );
  const emitInitial = options.emitInitial ?? true;
  return pollPipeline('suspensionWatch', options, { suspension: exchanges }, (kit) => {
    let polls = 0;
    let changes = 0;
    const changes$ = merge(
      ...exchanges.map((exchange) =>
        pollSuspensions(client, {
          exchange,
          intervalMs,
          sourceId: `suspension-watch:${exchange}`,
          scheduler: kit.scheduler,
        }).pipe(
          // Before suspensionChanges, so a retry keeps what the exchange's differ already knows.
          retryTransient({
            delayMs: intervalMs,
            clock: kit.clock,
            onRetry: (err) =>
              kit.warn(`suspension poll of ${exchange} failed; retrying at the next poll`, err),
          }),
          tap(() => polls++),
          suspensionChanges({ emitInitial }),
        ),
      ),
    ).pipe(
      kit.untilStopped(),
      tap(() => changes++),
      kit.toListener('onChange', options.onChange),
    );
    // A removed record only left the service's one-year window: the sinks keep what they had.
    const records$ = changes$.pipe(
      filter((c) => c.change !== 'removed'),
      map((c) => c.record),
    );
    return {
      records$,
      summary: (files) => ({ polls, changes, files: files.newest, fileCount: files.count }),
    };
  });
}
