import { KLINE_PERIOD_MS, barFinalAfterMs, calendarOf, type KlineType } from '@quoteflow/core';

/**
 * When a read of the bar labelled `tsMs` can prove it final, if it may have closed before
 * `readAtMs` (when its newest values were read): for an intraday bar one period after its label (no
 * labelling lets a bar last longer than that from its label; a later bar then exists while the
 * market trades), or else when the calendar closes its session; plus the grace. `undefined` when the
 * bar was certainly still forming when read: such a bar is not one of the closed bars of that read.
 */
export function settleAtMs(
  tsMs: number,
  readAtMs: number,
  code: string,
  klineType: KlineType,
  graceMs: number,
): number | undefined {
  const periodMs = KLINE_PERIOD_MS[klineType];
  const byCalendar = barFinalAfterMs(tsMs, klineType, calendarOf(code));
  const mayHaveClosedAt = Math.min(byCalendar, periodMs === undefined ? Infinity : tsMs + periodMs);
  return readAtMs < mayHaveClosedAt ? undefined : mayHaveClosedAt + graceMs;
}
