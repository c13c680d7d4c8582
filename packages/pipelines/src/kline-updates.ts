import {
  type BarUpdate,
  type GapMarker,
  type HistoryMarker,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import { estimatePlan, limitOverridesOf } from '@quoteflow/core/internal';
import type { BarMergerOptions } from '@quoteflow/operators';
import type { CommittingSink } from '@quoteflow/sinks';
import { Observable, type Subscription } from 'rxjs';
import { KlineSource } from './internal/kline-source.js';
import { checkUniverse, missingSeries } from './internal/kline-universe.js';
import { resumePointOf } from './internal/resume-points.js';
import { KLINE_SYNC_DEFAULTS, type KlineReadOptions, type KlineSyncEvent } from './kline-sync-options.js';
import { PipelineError } from './pipeline-error.js';

/** A change of a running {@link klineUpdates}' universe (a cluster worker's takeover or hand-over). */
export interface KlineUniverseChange {
  /** Codes to start (with the run's kline types), from where their sinks resume. */
  readonly add?: readonly string[];
  /** Codes to stop: their bars not yet final are dropped, reads in flight go nowhere. */
  readonly remove?: readonly string[];
  /** Called once the change is applied (the added series backfilled), or with why it failed. */
  readonly applied?: (error?: unknown) => void;
}

/** Options of {@link klineUpdates}. */
export interface KlineUpdatesOptions extends KlineReadOptions {
  /**
   * The committing sinks the updates go to: each series resumes from the oldest of their
   * watermarks (each sink drops the bars it holds), a series none of them holds starts with its
   * `bars` newest, and one that every sink holds fewer than `bars` of grows backwards.
   * @defaultValue none: every series starts with its `bars` newest bars
   */
  readonly resumeFrom?: readonly CommittingSink[];
  /** Whether a halt explains bars missing between two bars (`mergeBars`' `isHalted`). */
  readonly isHalted?: BarMergerOptions['isHalted'];
  /** Codes to add or remove while it runs. */
  readonly changes?: Observable<KlineUniverseChange>;
}

/**
 * K-line bars of a universe as the service's recommended usage gives them, as one stream: each
 * series' history through core's pager (`klineHistory`, the N newest closed bars, or from where its
 * sinks resume), then the latest bars through core's poller (`pollLatestBatches`, at the plan's
 * refresh period, by the markets' calendars), merged by `mergeBars`, which alone decides what is
 * final: every closed bar comes once as `final: true` (in order per series; older history, where
 * sinks hold fewer than N bars, below the oldest held), every change of a forming bar as
 * `final: false`, and `GapMarker`s for bars the calendar expects and no answer holds (after they
 * were asked for again). The re-reads the merger asks for go back through the pager.
 *
 * Each series' backfill is bracketed by `HistoryMarker`s: `begin` before its first bar, then
 * `complete` (a live run: once its history is read; backfill only: at the end) or `cut-short` (it
 * left the run). In between, a history longer than one page comes newest page first, so older
 * bars follow newer ones; after the end, its finals come in time order. `commitTo` hands the
 * markers to the sinks (Kafka holds the series until the end, then sends it oldest first) and
 * cuts short what is still open when the stream ends.
 *
 * Backfill only (`live: false`): completes once each series holds its N most recent closed bars;
 * otherwise it polls until unsubscribed. Every request goes through the client's scheduler.
 * Failures (a refused token, an unknown code) error the stream; a failed poll is retried.
 *
 * @example
 * ```ts
 * const files = await DatasetSink.open({ dir: './data' });
 * klineUpdates(client, { codes: ['BTCUSDT', 'AAPL.US'], klineTypes: [1], bars: 500, resumeFrom: [files] })
 *   .pipe(commitTo([files]))
 *   .subscribe();
 * ```
 */
export function klineUpdates(
  client: QuoteflowClient,
  options: KlineUpdatesOptions,
): Observable<BarUpdate | GapMarker | HistoryMarker> {
  const { codes, klineTypes } = options;
  checkUniverse(codes, klineTypes);
  const bars = options.bars ?? KLINE_SYNC_DEFAULTS.bars;
  if (!Number.isInteger(bars) || bars < 0)
    throw new PipelineError(
      'QF_PIPELINE_CONFIG',
      `klineUpdates: "bars" must be an integer >= 0, got ${bars}`,
    );
  return new Observable<BarUpdate | GapMarker | HistoryMarker>((subscriber) => {
    const abort = new AbortController();
    let ended = false;
    const fail = (err: unknown): void => {
      if (ended) return;
      ended = true;
      abort.abort(err);
      subscriber.error(err);
    };
    const source = new KlineSource(sourceOptions(client, options, bars, abort.signal, subscriber, fail));
    const changes = watchChanges(source, options, abort.signal);
    void runUpdates(source, codes, klineTypes, options, abort.signal).then(
      (done) => {
        if (done && !ended) {
          ended = true;
          subscriber.complete();
        }
      },
      (err: unknown) => (abort.signal.aborted ? undefined : fail(err)),
    );
    return () => {
      ended = true;
      changes?.unsubscribe();
      abort.abort(new PipelineError('QF_PIPELINE', 'klineUpdates: unsubscribed'));
      void source.close();
    };
  });
}

function sourceOptions(
  client: QuoteflowClient,
  options: KlineUpdatesOptions,
  bars: number,
  signal: AbortSignal,
  subscriber: { next(v: BarUpdate | GapMarker | HistoryMarker): void },
  fail: (err: unknown) => void,
): ConstructorParameters<typeof KlineSource>[0] {
  const sinks = options.resumeFrom ?? [];
  const closeAware = options.closeAwarePolling !== false;
  return {
    client,
    bars,
    live: options.live ?? true,
    graceMs: options.graceMs ?? KLINE_SYNC_DEFAULTS.graceMs,
    settleWaitMs: options.settleWaitMs ?? KLINE_SYNC_DEFAULTS.settleWaitMs,
    backfillConcurrency: options.backfillConcurrency ?? KLINE_SYNC_DEFAULTS.backfillConcurrency,
    closeAwarePolling: closeAware,
    fixedPeriod: options.refreshPeriodMs !== undefined,
    refreshPeriodMs: (codes) => {
      if (options.refreshPeriodMs !== undefined) return options.refreshPeriodMs;
      const { live } = estimatePlan(
        client.plan,
        { codes, klineTypes: options.klineTypes, bars },
        limitOverridesOf(client.limits),
      );
      // The plan's period counts on close-aware polling (no request for a closed market); polling
      // every series at every cycle has to make the day's budget last all day.
      return Math.max(1_000, closeAware ? live.refreshPeriodMs : live.refreshPeriodPollingAllMs);
    },
    clock: options.clock ?? client.clock,
    signal,
    resume: (code, klineType) => resumePointOf(sinks, code, klineType),
    ...(options.isHalted === undefined ? {} : { isHalted: options.isHalted }),
    emitEvent: (e: KlineSyncEvent) => {
      try {
        options.onEvent?.(e);
      } catch {
        // A listener's failure must not stop the data.
      }
    },
    emit: (out) => subscriber.next(out),
    fail,
  };
}

/** Backfills the universe, then polls (resolves `false`: runs until unsubscribed) or settles (`true`). */
async function runUpdates(
  source: KlineSource,
  codes: readonly string[],
  klineTypes: readonly KlineType[],
  options: KlineUpdatesOptions,
  signal: AbortSignal,
): Promise<boolean> {
  const clock = source.clock;
  const startedAt = clock.now();
  await source.add(missingSeries(source.series, codes, klineTypes));
  if (signal.aborted) return false;
  source.event({ type: 'backfill-done', series: source.series.size, durationMs: clock.now() - startedAt });
  if (options.live ?? true) {
    source.startLive();
    return false;
  }
  await source.finishBackfill();
  return !signal.aborted;
}

/** Applies universe changes one at a time, in order. */
function watchChanges(
  source: KlineSource,
  options: KlineUpdatesOptions,
  signal: AbortSignal,
): Subscription | undefined {
  let chain = Promise.resolve();
  return options.changes?.subscribe((change) => {
    chain = chain.then(async () => {
      try {
        if (signal.aborted)
          throw new PipelineError('QF_PIPELINE', 'klineUpdates: stopped, no change applied');
        await applyChange(source, change, options.klineTypes);
        change.applied?.();
      } catch (err) {
        change.applied?.(err);
      }
    });
  });
}

async function applyChange(
  source: KlineSource,
  change: KlineUniverseChange,
  klineTypes: readonly KlineType[],
): Promise<void> {
  const less = change.remove ?? [];
  if (less.length > 0)
    source.remove(less.flatMap((code) => klineTypes.map((klineType) => ({ code, klineType }))));
  const fresh = missingSeries(source.series, change.add ?? [], klineTypes);
  if (fresh.length > 0) await source.add(fresh);
  if (source.isLive && (less.length > 0 || fresh.length > 0)) source.startLive();
}
