import { KLINE_PERIOD_MS, barFinalAfterMs, calendarOf, type KlineType } from '@quoteflow/core';

/**
 * How long from `nowMs` until a read of the bar labelled `tsMs` can prove it final: for an intraday
 * bar, one period after its label (a later bar then exists while the market trades; no labelling
 * lets a bar last longer than a period from its label), else when the calendar closes its session;
 * plus the grace. 0 when that moment has passed.
 */
export function settleDelayMs(
  tsMs: number,
  code: string,
  klineType: KlineType,
  graceMs: number,
  nowMs: number,
): number {
  const periodMs = KLINE_PERIOD_MS[klineType];
  const byCalendar = barFinalAfterMs(tsMs, klineType, calendarOf(code));
  const proofAt = Math.min(byCalendar, periodMs === undefined ? Infinity : tsMs + periodMs) + graceMs;
  return Math.max(0, proofAt - nowMs);
}
