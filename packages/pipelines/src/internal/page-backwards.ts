import { klineHistory, type Bar, type KlineType, type QuoteflowClient } from '@quoteflow/core';
import { MAX_KLINE_PER_REQUEST } from '@quoteflow/core/internal';
import { collect } from './collect.js';

/** What {@link pageBackwards} read. */
export interface PagedBack {
  /** Bars handed to `onPage`, all pages together. */
  readonly got: number;
  /** The oldest bar handed on (epoch ms), if any. */
  readonly oldestMs: number | undefined;
  /** The service had no older bars before `needed` were read. */
  readonly exhausted: boolean;
}

/**
 * Up to `needed` bars of a series older than `beforeMs`, one page (one request of core's pager) at
 * a time, newest page first, each handed to `onPage` (oldest first within it) as soon as it
 * arrives: pages of closed history are final, and a stop or a failure between two pages keeps what
 * the earlier ones cost. Only for codes that can page back (`client.canPageBackwards`).
 */
export async function pageBackwards(
  client: QuoteflowClient,
  series: { readonly code: string; readonly klineType: KlineType },
  beforeMs: number,
  needed: number,
  signal: AbortSignal,
  onPage: (bars: readonly Bar[]) => void,
): Promise<PagedBack> {
  let got = 0;
  let oldestMs: number | undefined;
  let boundary = beforeMs;
  while (got < needed) {
    const count = Math.min(MAX_KLINE_PER_REQUEST, needed - got);
    const items = await collect(
      klineHistory(client, {
        code: series.code,
        klineType: series.klineType,
        bars: count,
        // Whole seconds on the wire: end one second before the oldest bar already read.
        endMs: boundary - 1_000,
        sourceId: `${series.code}:${series.klineType}`,
      }),
      signal,
    );
    const bars = items.filter((x): x is Bar => x.type === 'bar' && x.tsMs < boundary);
    if (bars.length > 0) {
      got += bars.length;
      boundary = bars[0]!.tsMs;
      oldestMs = boundary;
      onPage(bars);
    }
    if (bars.length < count) return { got, oldestMs, exhausted: true };
  }
  return { got, oldestMs, exhausted: false };
}
