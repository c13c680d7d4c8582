import {
  klineHistory,
  type Bar,
  type GapMarker,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import { HISTORY_GAP_REASONS, MAX_KLINE_PER_REQUEST } from '@quoteflow/core/internal';
import type { SeriesExtent } from '../sync-state.js';
import { collect } from './collect.js';
import { pageBackwards } from './page-backwards.js';

/** What {@link readOlderHistory} read: how many closed bars older than the dataset's first. */
export interface OlderHistory {
  readonly got: number;
  /** Why fewer bars than needed came back (the product class cannot page back, or the service has no more). */
  readonly shortBecause: GapMarker | undefined;
}

/**
 * The bars a series needs before its first one in the dataset so that the dataset holds `wanted`
 * bars: `wanted - held.rows` of them, the newest of those older than `held.firstMs`, handed to
 * `onBars` (oldest first within each call). Each is final by evidence (a newer bar of the series is
 * held, or came in the same answer). Codes that can page back are read backwards from just before
 * `held.firstMs`, each page handed on as it arrives (a stop between pages keeps the earlier ones);
 * the others (stocks) from their one latest page of up to 500 bars, which reaches part or all of
 * what is needed. A shortfall comes with the reason and the counts.
 */
export async function readOlderHistory(
  client: QuoteflowClient,
  series: { readonly code: string; readonly klineType: KlineType },
  held: SeriesExtent,
  wanted: number,
  signal: AbortSignal,
  onBars: (bars: readonly Bar[]) => void,
): Promise<OlderHistory> {
  const needed = wanted - held.rows;
  if (needed <= 0) return { got: 0, shortBecause: undefined };
  if (client.canPageBackwards(series.code)) {
    const paged = await pageBackwards(client, series, held.firstMs, needed, signal, onBars);
    if (!paged.exhausted) return { got: paged.got, shortBecause: undefined };
    return {
      got: paged.got,
      shortBecause: shortMarker(
        series,
        held,
        wanted,
        paged.got,
        paged.oldestMs,
        HISTORY_GAP_REASONS.exhausted,
      ),
    };
  }
  // Held rows are distinct bars no newer than the latest: with a page's worth held, the latest page
  // ends at or after the first one held. A restart of `sync --bars 1000` asks nothing to learn it.
  const pageHeld = held.rows >= MAX_KLINE_PER_REQUEST;
  const items = pageHeld ? [] : await readLatestPage(client, series, signal);
  const bars = items.filter((x): x is Bar => x.type === 'bar' && x.tsMs < held.firstMs);
  const kept = bars.slice(Math.max(0, bars.length - needed));
  if (kept.length > 0) onBars(kept);
  if (kept.length >= needed) return { got: kept.length, shortBecause: undefined };
  // The service ran out (the pager says so), or a stock's one latest page ends before them.
  const exhausted = items.some((x) => x.type === 'gap' && x.reason.includes(HISTORY_GAP_REASONS.exhausted));
  const why = exhausted ? HISTORY_GAP_REASONS.exhausted : HISTORY_GAP_REASONS.cannotPage;
  return {
    got: kept.length,
    shortBecause: shortMarker(series, held, wanted, kept.length, kept[0]?.tsMs, why),
  };
}

function shortMarker(
  series: { readonly code: string; readonly klineType: KlineType },
  held: SeriesExtent,
  wanted: number,
  got: number,
  oldestMs: number | undefined,
  why: string,
): GapMarker {
  const needed = wanted - held.rows;
  return {
    type: 'gap',
    code: series.code,
    klineType: series.klineType,
    fromMs: undefined,
    toMs: oldestMs ?? held.firstMs,
    reason: `${series.code} kline_type ${series.klineType}: ${why}; got ${got} of the ${needed} bars older than the ${held.rows} held (${held.rows + got} of ${wanted})`,
  };
}

/**
 * A stock's latest page (provider facts: kline_timestamp_end must be 0). How many of its newest
 * bars are held or newer is unknown: ask for the whole page, which costs the same one request.
 */
function readLatestPage(
  client: QuoteflowClient,
  series: { readonly code: string; readonly klineType: KlineType },
  signal: AbortSignal,
): Promise<(Bar | GapMarker)[]> {
  return collect(
    klineHistory(client, {
      code: series.code,
      klineType: series.klineType,
      bars: MAX_KLINE_PER_REQUEST,
      sourceId: `${series.code}:${series.klineType}`,
    }),
    signal,
  );
}
