import {
  HISTORY_GAP_REASONS,
  klineHistory,
  MAX_KLINE_PER_REQUEST,
  type Bar,
  type GapMarker,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import type { SeriesExtent } from '../sync-state.js';
import { collect } from './collect.js';

/** What {@link readOlderHistory} found: closed bars older than the dataset's first, oldest first. */
export interface OlderHistory {
  readonly bars: readonly Bar[];
  /** Why fewer bars than needed came back (the product class cannot page back, or the service has no more). */
  readonly shortBecause: GapMarker | undefined;
}

/**
 * The bars a series needs before its first one in the dataset so that the dataset holds `wanted`
 * bars: `wanted - held.rows` of them, the newest of those older than `held.firstMs`. Each is final
 * by evidence (a newer bar of the series is held, or came in the same answer). Codes that can page
 * back are read backwards from just before `held.firstMs`; the others (stocks) from their one
 * latest page of up to 500 bars, which reaches part or all of what is needed. A shortfall comes
 * with the reason and the counts.
 */
export async function readOlderHistory(
  client: QuoteflowClient,
  series: { readonly code: string; readonly klineType: KlineType },
  held: SeriesExtent,
  wanted: number,
  signal: AbortSignal,
): Promise<OlderHistory> {
  const needed = wanted - held.rows;
  if (needed <= 0) return { bars: [], shortBecause: undefined };
  const canPage = client.canPageBackwards(series.code);
  // Held rows are distinct bars no newer than the latest: with a page's worth held, the latest page
  // ends at or after the first one held. A restart of `sync --bars 1000` asks nothing to learn it.
  const pageHeld = !canPage && held.rows >= MAX_KLINE_PER_REQUEST;
  const items = pageHeld ? [] : await readBefore(client, series, held.firstMs, needed, canPage, signal);
  const bars = items.filter((x): x is Bar => x.type === 'bar' && x.tsMs < held.firstMs);
  const kept = bars.slice(Math.max(0, bars.length - needed));
  if (kept.length >= needed) return { bars: kept, shortBecause: undefined };
  // The service ran out (the pager says so), or a stock's one latest page ends before them.
  const exhausted =
    canPage || items.some((x) => x.type === 'gap' && x.reason.includes(HISTORY_GAP_REASONS.exhausted));
  const why = exhausted ? HISTORY_GAP_REASONS.exhausted : HISTORY_GAP_REASONS.cannotPage;
  return {
    bars: kept,
    shortBecause: {
      type: 'gap',
      code: series.code,
      klineType: series.klineType,
      fromMs: undefined,
      toMs: kept[0]?.tsMs ?? held.firstMs,
      reason: `${series.code} kline_type ${series.klineType}: ${why}; got ${kept.length} of the ${needed} bars older than the ${held.rows} held (${held.rows + kept.length} of ${wanted})`,
    },
  };
}

/** Up to `needed` bars before `firstMs` where the code can page back; else its one latest page. */
function readBefore(
  client: QuoteflowClient,
  series: { readonly code: string; readonly klineType: KlineType },
  firstMs: number,
  needed: number,
  canPage: boolean,
  signal: AbortSignal,
): Promise<(Bar | GapMarker)[]> {
  return collect(
    klineHistory(client, {
      code: series.code,
      klineType: series.klineType,
      ...(canPage
        ? // Whole seconds on the wire: end one second before the first bar held.
          { bars: needed, endMs: firstMs - 1_000 }
        : // The latest page is the only one (provider facts: kline_timestamp_end must be 0). How
          // many of its newest bars are held or newer is unknown: ask for the whole page, which
          // costs the same one request.
          { bars: MAX_KLINE_PER_REQUEST }),
      sourceId: `${series.code}:${series.klineType}`,
    }),
    signal,
  );
}
