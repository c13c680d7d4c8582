import { defer, mergeMap, type Observable } from 'rxjs';
import { isKlineType, type Bar, type GapMarker, type KlineType } from '../domain.js';
import { InvalidOptionError } from '../errors.js';
import { fromAbortable } from '../internal/from-abortable.js';
import { nextSourceId } from '../internal/next-source-id.js';
import { MAX_KLINE_PER_REQUEST } from '../plans.js';
import type { SourceClient } from './source-client.js';

/** Options of {@link klineHistory}. Give `bars`, `startMs`, or both (whichever is reached first ends paging). */
export interface KlineHistoryOptions {
  readonly code: string;
  readonly klineType: KlineType;
  /** How many of the most recent bars to return. */
  readonly bars?: number;
  /** Return bars starting at or after this instant (epoch ms). */
  readonly startMs?: number;
  /** Page backwards from this instant (epoch ms) instead of the latest bar; only for codes that can page. */
  readonly endMs?: number;
  readonly sourceId?: string;
}

/** Why history stops short of what was asked (the `reason` of the {@link GapMarker}). */
export const HISTORY_GAP_REASONS = {
  cannotPage:
    'codes other than forex, precious metals and crypto cannot page backwards through /kline (kline_timestamp_end must be 0): only the latest page of up to 500 bars is reachable',
  exhausted: 'the service returned no older bars',
} as const;

/**
 * K-line history of one code and type, paging backwards through `kline_timestamp_end` (500 bars
 * a request, priority `'backfill'`) until `bars` bars or `startMs` is reached. Page overlaps are
 * deduplicated and the bars are emitted oldest first once paging is done, then the observable
 * completes. All bars of one call are stamped as one answer: `readAtMs` of the first page (every
 * page was read at or after it) and `receivedAtMs` of the last, so `mergeBars` can tell that they
 * leave nothing out between the oldest and the newest. When the service cannot reach back that far (only forex, precious-metal and crypto codes
 * page back: the others accept only the latest page; or it has no older bars) a {@link GapMarker} saying so is emitted first, never a silent
 * shortfall. The newest bar may still be forming: which bars are final is `mergeBars`' decision
 * (operators), never the pager's. Cold; unsubscribing aborts the request in flight; failures error the stream.
 *
 * @example
 * klineHistory(client, { code: 'BTCUSDT', klineType: 1, bars: 2_000 }).subscribe((x) => x.type === 'bar' && console.log(x.tsMs));
 */
export function klineHistory(
  client: SourceClient,
  options: KlineHistoryOptions,
): Observable<Bar | GapMarker> {
  const { code, klineType, bars, startMs, endMs } = options;
  if (typeof code !== 'string' || code === '')
    throw new InvalidOptionError(
      'code',
      `klineHistory: "code" must be a non-empty string, got ${JSON.stringify(code)}`,
    );
  if (!isKlineType(klineType))
    throw new InvalidOptionError(
      'klineType',
      `klineHistory: "klineType" must be an integer from 1 to 10, got ${JSON.stringify(klineType)}`,
    );
  if (bars === undefined && startMs === undefined)
    throw new InvalidOptionError('bars', 'klineHistory: give "bars", "startMs" or both');
  if (bars !== undefined && (!Number.isInteger(bars) || bars < 1))
    throw new InvalidOptionError(
      'bars',
      `klineHistory: "bars" must be a positive integer, got ${JSON.stringify(bars)}`,
    );
  if (startMs !== undefined && !Number.isFinite(startMs))
    throw new InvalidOptionError(
      'startMs',
      `klineHistory: "startMs" must be an epoch-ms instant, got ${JSON.stringify(startMs)}`,
    );
  if (endMs !== undefined && (!Number.isFinite(endMs) || endMs < 0))
    throw new InvalidOptionError(
      'endMs',
      `klineHistory: "endMs" must be an epoch-ms instant, got ${JSON.stringify(endMs)}`,
    );
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId(`history-${code}-${klineType}`);
    return fromAbortable((signal) => collectHistory(client, options, sourceId, signal)).pipe(
      mergeMap((items) => items),
    );
  });
}

async function collectHistory(
  client: SourceClient,
  options: KlineHistoryOptions,
  sourceId: string,
  signal: AbortSignal,
): Promise<(Bar | GapMarker)[]> {
  const { code, klineType, startMs } = options;
  const canPage = client.canPageBackwards(code);
  if (options.endMs !== undefined && options.endMs !== 0 && !canPage) {
    throw new InvalidOptionError(
      'endMs',
      `klineHistory: ${code} cannot page backwards, so "endMs" is not accepted (only forex, precious-metal and crypto codes page back: the others accept only the latest page)`,
    );
  }
  const want = options.bars ?? Number.POSITIVE_INFINITY;
  const byTs = new Map<number, Bar>();
  let end = options.endMs ?? 0;
  let gap: string | undefined;
  for (;;) {
    // One spare bar per later page: a page may repeat the boundary bar of the previous one.
    const spare = byTs.size === 0 ? 0 : 1;
    const count = Math.min(
      MAX_KLINE_PER_REQUEST,
      Number.isFinite(want) ? want - byTs.size + spare : MAX_KLINE_PER_REQUEST,
    );
    const page = await client.kline(
      { code, klineType, count, endMs: end },
      { signal, priority: 'backfill', sourceId },
    );
    let added = 0;
    for (const bar of page) {
      if (!byTs.has(bar.tsMs)) {
        byTs.set(bar.tsMs, bar);
        added++;
      }
    }
    const oldest = page.length === 0 ? undefined : Math.min(...byTs.keys());
    const reachedStart = startMs !== undefined && oldest !== undefined && oldest <= startMs;
    if (byTs.size >= want || reachedStart) break;
    if (page.length < count || added === 0 || oldest === undefined) {
      gap = HISTORY_GAP_REASONS.exhausted;
      break;
    }
    if (!canPage) {
      gap = HISTORY_GAP_REASONS.cannotPage;
      break;
    }
    // Timestamps are whole seconds on the wire: end the next page one second before the oldest bar.
    end = oldest - 1_000;
  }
  let sorted = asOneAnswer(byTs);
  if (startMs !== undefined) sorted = sorted.filter((b) => b.tsMs >= startMs);
  const target = options.bars;
  if (target !== undefined && sorted.length > target) sorted = sorted.slice(sorted.length - target);
  if (gap === undefined) return sorted;
  const marker: GapMarker = {
    type: 'gap',
    code,
    klineType,
    fromMs: startMs,
    toMs: sorted[0]?.tsMs,
    reason: `${code} kline_type ${klineType}: ${gap}; got ${sorted.length}${target === undefined ? '' : ` of ${target}`} bars`,
  };
  return [marker, ...sorted];
}

/**
 * The bars of one call, oldest first, stamped as one answer. The pages of one call are one answer
 * to "the history from here": they were read one after the other and together leave nothing out
 * between their oldest and newest bar. Stamped as such (the first page's send, a lower bound of
 * every page's read; the last page's arrival, unique to it), a merger can see that they cover a gap
 * and prove each bar by the newer ones.
 */
function asOneAnswer(byTs: ReadonlyMap<number, Bar>): Bar[] {
  let readAtMs = Infinity;
  let receivedAtMs = -Infinity;
  for (const bar of byTs.values()) {
    if (bar.readAtMs < readAtMs) readAtMs = bar.readAtMs;
    if (bar.receivedAtMs > receivedAtMs) receivedAtMs = bar.receivedAtMs;
  }
  return [...byTs.values()]
    .sort((a, b) => a.tsMs - b.tsMs)
    .map((bar) =>
      bar.readAtMs === readAtMs && bar.receivedAtMs === receivedAtMs
        ? bar
        : { ...bar, readAtMs, receivedAtMs },
    );
}
