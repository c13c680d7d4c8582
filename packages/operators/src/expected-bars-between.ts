import { calendarOf, type KlineType } from '@quoteflow/core';
import { barStartsIn, nextBarStart } from './internal/next-bar-start.js';

/**
 * How many bars of `code` the calendar expects strictly between two bar starts `aMs < bMs`, and the
 * first and last of them (`undefined` when none): sessions, lunch breaks, holidays and early closes
 * of the exchange; UTC periods for 24-hour markets. An estimate for reports (one labelling, core's),
 * not a finality rule: use core's `barsMissingBetween` to decide whether bars are missing at all.
 *
 * @example
 * ```ts
 * expectedBarsBetween('BTCUSDT', 1, Date.UTC(2026, 0, 1, 0, 0), Date.UTC(2026, 0, 1, 0, 5)); // { count: 4, firstMs: …00:01, lastMs: …00:04 }
 * ```
 */
export function expectedBarsBetween(
  code: string,
  klineType: KlineType,
  aMs: number,
  bMs: number,
): { readonly count: number; readonly firstMs: number | undefined; readonly lastMs: number | undefined } {
  if (!(bMs > aMs)) return { count: 0, firstMs: undefined, lastMs: undefined };
  const calendar = calendarOf(code);
  const firstMs = nextBarStart(aMs, klineType, calendar);
  if (firstMs >= bMs) return { count: 0, firstMs: undefined, lastMs: undefined };
  const { count, lastMs } = barStartsIn(firstMs, bMs, klineType, calendar);
  return { count, firstMs, lastMs };
}
