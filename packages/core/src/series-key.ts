import type { KlineType } from './domain.js';

/**
 * The key of one bar series, `"<code>|<klineType>"` (`"AAPL.US|1"`). Operators key their state by
 * it, `mergeBars({ lastClosed })` takes a map with these keys, and committing sinks report their
 * watermarks by it, so what a sink committed seeds a merger after a restart. Codes never contain
 * `|` (provider-facts.md).
 *
 * @example
 * ```ts
 * const lastClosed = new Map([[seriesKey('AAPL.US', 1), 1_700_000_000_000]]);
 * ```
 */
export function seriesKey(code: string, klineType: KlineType | number): string {
  return `${code}|${klineType}`;
}
