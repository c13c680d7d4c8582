import type { KlineType } from '@quoteflow/core';

/**
 * The key of one bar series, `"<code>|<klineType>"` (`"AAPL.US|1"`). Operators key their state by
 * it, and `mergeBars({ lastClosed })` takes a map with these keys, so a state file written with it
 * seeds a merger after a restart. Codes never contain `|` (provider-facts.md).
 *
 * @example
 * ```ts
 * const lastClosed = new Map([[seriesKey('AAPL.US', 1), 1_700_000_000_000]]);
 * ```
 */
export function seriesKey(code: string, klineType: KlineType | number): string {
  return `${code}|${klineType}`;
}
