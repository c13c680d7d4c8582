import type { KlineSyncEvent } from '@quoteflow/pipelines';
import { exchangeLocalTime } from './exchange-local-time.js';

type GapEvent = Extract<KlineSyncEvent, { type: 'gap' }>;

/**
 * The log fields of a sync's gap warning: the missing bars' range (first and last bar start) in UTC
 * and on the exchange's own clock with its zone, as its calendar and its people read it, and how
 * many bars. Without a range (history that stops where it stops), where it was asked to start.
 */
export function gapWarningFields(e: GapEvent): Record<string, string | number | undefined> {
  const fromMs = e.missing?.firstMs ?? e.fromMs;
  const toMs = e.missing?.lastMs;
  return {
    code: e.code,
    klineType: e.klineType,
    from: fromMs === undefined ? undefined : new Date(fromMs).toISOString(),
    to: toMs === undefined ? undefined : new Date(toMs).toISOString(),
    fromLocal: fromMs === undefined ? undefined : exchangeLocalTime(fromMs, e.code),
    toLocal: toMs === undefined ? undefined : exchangeLocalTime(toMs, e.code),
    bars: e.missing?.bars,
  };
}
