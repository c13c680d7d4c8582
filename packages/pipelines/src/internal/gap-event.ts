import type { GapMarker, KlineType } from '@quoteflow/core';
import { expectedBarsBetween } from '@quoteflow/operators/internal';
import type { KlineSyncEvent } from '../kline-sync-options.js';

/**
 * The sync's `gap` event for a marker: with the first and last bar the calendar expects in the hole,
 * so a warning can name the whole range, not only the bar before it.
 */
export function gapEvent(code: string, klineType: KlineType, gap: GapMarker): KlineSyncEvent {
  const { fromMs, toMs } = gap;
  const expected =
    fromMs === undefined || toMs === undefined
      ? undefined
      : expectedBarsBetween(code, klineType, fromMs, toMs);
  return {
    type: 'gap',
    code,
    klineType,
    fromMs,
    toMs,
    missing:
      expected?.firstMs === undefined || expected.lastMs === undefined
        ? undefined
        : { firstMs: expected.firstMs, lastMs: expected.lastMs, bars: expected.count },
    reason: gap.reason,
  };
}
