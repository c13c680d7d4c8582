import {
  MAX_KLINE_PER_REQUEST,
  type Bar,
  type KlineType,
  type Priority,
  type QuoteflowClient,
} from '@quoteflow/core';

/** What one history fetch wants. */
export interface HistoryRequest {
  readonly code: string;
  readonly klineType: KlineType;
  /** Bars wanted, counting the newest (possibly forming) one. */
  readonly count: number;
  /** Stop paging once bars at or before this start are reached (a resume point), if given. */
  readonly afterMs?: number | undefined;
  readonly priority: Priority;
  readonly signal?: AbortSignal | undefined;
  /** Called after each page (for progress). */
  readonly onPage?: ((bars: number) => void) | undefined;
}

/** The result: bars oldest first, one per start, and whether the service could not reach back far enough. */
export interface HistoryResult {
  readonly bars: Bar[];
  /** True when the class cannot page backwards (stocks) and the wanted range is longer than one page. */
  readonly truncated: boolean;
}

/**
 * K-line history through `/kline`, newest page first, paging backwards through
 * `kline_timestamp_end` where the product class allows it (spec: only forex, precious metals and
 * crypto), until `count` bars or the resume point are reached or the service has no older bars.
 */
export async function fetchKlineHistory(
  client: QuoteflowClient,
  req: HistoryRequest,
): Promise<HistoryResult> {
  const byStart = new Map<number, Bar>();
  let endMs: number | undefined;
  const pageable = client.canPageBackwards(req.code);
  for (;;) {
    const want = req.count - byStart.size;
    const page = await client.kline(
      {
        code: req.code,
        klineType: req.klineType,
        count: Math.max(1, Math.min(MAX_KLINE_PER_REQUEST, want)),
        endMs,
      },
      {
        priority: req.priority,
        sourceId: `${req.code}:${req.klineType}`,
        ...(req.signal === undefined ? {} : { signal: req.signal }),
      },
    );
    const before = byStart.size;
    for (const bar of page) byStart.set(bar.tsMs, bar);
    req.onPage?.(byStart.size);
    const oldest = Math.min(...page.map((b) => b.tsMs));
    const reachedResume = req.afterMs !== undefined && oldest <= req.afterMs;
    if (byStart.size >= req.count || reachedResume || page.length === 0 || byStart.size === before) break;
    if (!pageable) {
      return { bars: sorted(byStart), truncated: page.length >= MAX_KLINE_PER_REQUEST };
    }
    // The next page ends just before the oldest bar seen (timestamps are whole seconds).
    endMs = oldest - 1;
    if (page.length < Math.min(MAX_KLINE_PER_REQUEST, want)) break; // the service has nothing older
  }
  const bars = sorted(byStart);
  return { bars: bars.slice(Math.max(0, bars.length - req.count)), truncated: false };
}

function sorted(byStart: Map<number, Bar>): Bar[] {
  return [...byStart.values()].sort((a, b) => a.tsMs - b.tsMs);
}
