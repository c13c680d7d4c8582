import {
  klineHistory,
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
 * bars: `wanted - held.rows` of them, read backwards from just before `held.firstMs`. Each is final
 * by evidence (the dataset already holds a newer bar of the series, read earlier). Codes whose
 * product class cannot page backwards (stocks: one page of 500) get nothing, with the reason.
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
  if (!client.canPageBackwards(series.code)) {
    return {
      bars: [],
      shortBecause: {
        type: 'gap',
        code: series.code,
        klineType: series.klineType,
        fromMs: undefined,
        toMs: held.firstMs,
        reason: 'cannot-page-backwards: only the latest page of up to 500 bars is reachable',
      },
    };
  }
  const items = await collect(
    klineHistory(client, {
      code: series.code,
      klineType: series.klineType,
      bars: needed,
      // Whole seconds on the wire: end one second before the first bar held.
      endMs: held.firstMs - 1_000,
      sourceId: `${series.code}:${series.klineType}`,
    }),
    signal,
  );
  const bars = items.filter((x): x is Bar => x.type === 'bar' && x.tsMs < held.firstMs);
  const kept = bars.slice(Math.max(0, bars.length - needed));
  const gap = items.find((x): x is GapMarker => x.type === 'gap');
  return { bars: kept, shortBecause: kept.length < needed ? gap : undefined };
}
