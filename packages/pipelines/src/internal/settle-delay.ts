import { calendarOf, type Clock, type KlineType } from '@quoteflow/core';
import { KLINE_PERIOD_MS, isBarClosedAt, runLimited, sleepOn } from '@quoteflow/core/internal';
import type { KlineSeriesState } from './kline-series-state.js';

/**
 * When a read of the bar labelled `tsMs` can prove it final, if it may have closed before
 * `readAtMs` (when its newest values were read), or `undefined` when the bar was certainly still
 * forming when read (it is not one of the closed bars of that read). "Closed" is core's one
 * predicate, `isBarClosedAt` (as `mergeBars` proves it): a bar the calendar had closed when read
 * (without the grace) is proven by a read `graceMs` later. The merger's other proof is a newer bar:
 * an intraday bar lasts at most one period from its label under every labelling, so from then on
 * an answer may hold the newer bar while the market trades; that is when, not whether, to read.
 */
export function settleAtMs(
  tsMs: number,
  readAtMs: number,
  code: string,
  klineType: KlineType,
  graceMs: number,
): number | undefined {
  const periodMs = KLINE_PERIOD_MS[klineType];
  const newerBarFromMs = periodMs === undefined ? Infinity : tsMs + periodMs;
  const closedWhenRead = isBarClosedAt(tsMs, klineType, calendarOf(code), readAtMs, 0);
  if (!closedWhenRead && readAtMs < newerBarFromMs) return undefined;
  return Math.min(closedWhenRead ? readAtMs : Infinity, newerBarFromMs) + graceMs;
}

/**
 * Backfill-only: the newest bar of a series may have closed just before it was read (its end
 * passed, no newer bar yet): read it again once that can prove it (within `settleWaitMs`), so the N
 * bars are the N most recent closed ones. A bar that was still forming when read is not waited for.
 */
export async function settleNewestBars(
  series: readonly KlineSeriesState[],
  options: {
    readonly clock: Clock;
    readonly graceMs: number;
    readonly settleWaitMs: number;
    readonly concurrency: number;
    readonly signal: AbortSignal;
    readonly reread: (s: KlineSeriesState, startMs: number) => Promise<unknown>;
  },
): Promise<void> {
  const { clock, signal } = options;
  const due: [KlineSeriesState, number, number][] = [];
  for (const s of series) {
    if (s.newestPending === undefined) continue;
    const at = settleAtMs(s.newestPending, s.newestPendingReadAtMs, s.code, s.klineType, options.graceMs);
    if (at !== undefined && at - clock.now() <= options.settleWaitMs) due.push([s, s.newestPending, at]);
  }
  await runLimited(
    due,
    options.concurrency,
    async ([s, target, at]) => {
      // A stop ends the wait; the signal is checked next.
      await sleepOn(clock, at - clock.now(), signal).catch(() => undefined);
      if (!signal.aborted && (s.newestFinal === undefined || s.newestFinal < target))
        await options.reread(s, target);
    },
    signal,
  );
}
