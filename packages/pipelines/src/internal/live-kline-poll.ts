import {
  clockScheduler,
  type Bar,
  type BatchKlineGroupResult,
  type Clock,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import { pollLatestBatches } from '@quoteflow/core/internal';
import type { Subscription } from 'rxjs';
import type { KlineSyncEvent } from '../kline-sync-options.js';
import { retryTransient } from './retry-transient.js';
import type { LivePollPlanner } from './live-poll-planner.js';

/** What {@link pollLiveKlines} takes. */
export interface LiveKlinePollOptions {
  readonly client: QuoteflowClient;
  readonly series: readonly { readonly code: string; readonly klineType: KlineType }[];
  readonly refreshPeriodMs: number;
  /**
   * Chooses the series of each poll by their markets' calendars (`LivePollPlanner`); the next poll
   * then starts after the time the plan needs for this one's requests (or `refreshPeriodMs` if
   * `fixedPeriod`). Without it every series is polled every `refreshPeriodMs`.
   */
  readonly planner?: LivePollPlanner;
  /** With a planner: poll every `refreshPeriodMs` (the caller chose it) instead of at the plan's pace. */
  readonly fixedPeriod?: boolean;
  readonly clock: Clock;
  /** The groups of one answer, each with its bars oldest first, in arrival order (for the merger). */
  readonly onAnswer: (results: readonly BatchKlineGroupResult[]) => void;
  /** After the last answer of a cycle: the newest bar start in that answer, the cycle's duration. */
  readonly onCycle: (newestBarMs: number | undefined, durationMs: number) => void;
  readonly emitEvent: (event: KlineSyncEvent) => void;
  /** A fatal error (a refused token, say): the sync stops with it. */
  readonly onFatal: (error: unknown) => void;
}

/**
 * The live half of a K-line sync: the latest 2 bars of the series through `/batch-kline`, every
 * series at the plan's refresh period, or those the calendar planner chooses at each poll; a failed
 * poll is retried on the next cycle, a fatal one ends the sync.
 */
export function pollLiveKlines(options: LiveKlinePollOptions): Subscription {
  const { client, refreshPeriodMs, clock, emitEvent } = options;
  const groups = options.series.map((s) => ({ code: s.code, klineType: s.klineType, count: 2 as const }));
  const planner = options.planner;
  return pollLatestBatches(client, {
    groups,
    ...(planner === undefined || options.fixedPeriod === true ? { intervalMs: refreshPeriodMs } : {}),
    ...(planner === undefined ? {} : { selectGroups: (nowMs: number) => planner.select(nowMs) }),
    sourceId: 'kline-sync-live',
    scheduler: clockScheduler(clock),
  })
    .pipe(
      retryTransient({
        delayMs: refreshPeriodMs,
        clock,
        onRetry: (error) =>
          emitEvent({ type: 'warning', message: 'live poll failed; retrying next cycle', error }),
      }),
    )
    .subscribe({
      next: (batch) => {
        let newestBarMs: number | undefined;
        const latest: Bar[] = [];
        for (const r of batch.results) for (const b of r.bars) latest.push(b);
        for (const b of latest) if (newestBarMs === undefined || b.tsMs > newestBarMs) newestBarMs = b.tsMs;
        planner?.observe(latest);
        options.onAnswer(batch.results);
        if (batch.lastOfCycle) options.onCycle(newestBarMs, batch.cycleDurationMs);
      },
      error: options.onFatal,
    });
}
