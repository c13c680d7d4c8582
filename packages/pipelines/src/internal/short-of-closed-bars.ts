import { calendarOf, type Bar, type GapMarker } from '@quoteflow/core';
import { HISTORY_GAP_REASONS, isBarClosedAt } from '@quoteflow/core/internal';

/**
 * The pager's shortfall marker of a first read (`count` bars, the newest `newest`), restated in
 * closed bars against the `bars` the user asked for, or `undefined` when the read holds them all. A first read asks for `bars + 1`
 * (the newest may still be forming), so the pager's count is one off, and a stock's full latest
 * page of 500 answers `--bars 500` exactly once its newest bar has closed: no shortfall to report.
 * The newest bar counts as closed as `mergeBars` proves it (core's `isBarClosedAt`: read after its
 * session closed plus `graceMs`).
 */
export function shortOfClosedBars(
  gap: GapMarker,
  newest: Bar | undefined,
  count: number,
  bars: number,
  graceMs: number,
): GapMarker | undefined {
  const formingNewest =
    newest !== undefined &&
    !isBarClosedAt(newest.tsMs, newest.klineType, calendarOf(newest.code), newest.readAtMs, graceMs);
  const closed = Math.min(bars, count - (formingNewest ? 1 : 0));
  if (closed >= bars) return undefined;
  const why = Object.values(HISTORY_GAP_REASONS).find((r) => gap.reason.includes(r)) ?? gap.reason;
  return {
    ...gap,
    reason: `${gap.code} kline_type ${gap.klineType ?? newest?.klineType}: ${why}; got ${closed} of ${bars} closed bars`,
  };
}
