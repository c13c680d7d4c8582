import { type KlineType, seriesKey } from '@quoteflow/core';
import type { CommittingSink, SeriesWatermark } from '@quoteflow/sinks';

/**
 * Where one series resumes, from the watermarks of the sinks that keep them (each sink drops what
 * it holds, so reading from the oldest of them repeats nothing anywhere):
 * - `none`: no sink holds the series: read its N newest bars;
 * - `all`: every sink holds it: read from the oldest newest bar of them (`lastMs`); the merger is
 *   seeded with it, and with the newest oldest bar (`firstMs`) so that older history can grow the
 *   series backwards; `rows` is the fewest any sink holds;
 * - `some`: a sink lacks it (one added later): read from `lastMs`, and the N newest if that gives
 *   fewer, with no seed, so that the lacking sink gets its N bars and the others what they miss.
 */
export type ResumePoint =
  | { readonly kind: 'none' }
  | { readonly kind: 'all'; readonly lastMs: number; readonly firstMs: number; readonly rows: number }
  | { readonly kind: 'some'; readonly lastMs: number };

/** The resume point of a series from `sinks` (those without watermarks have no say). */
export function resumePointOf(
  sinks: readonly CommittingSink[],
  code: string,
  klineType: KlineType,
): ResumePoint {
  const key = seriesKey(code, klineType);
  const held: SeriesWatermark[] = [];
  let lacking = false;
  for (const sink of sinks) {
    const marks = sink.watermarks();
    if (marks === undefined) continue;
    const w = marks.get(key);
    if (w === undefined) lacking = true;
    else held.push(w);
  }
  if (held.length === 0) return { kind: 'none' };
  const lastMs = Math.min(...held.map((w) => w.last));
  if (lacking) return { kind: 'some', lastMs };
  return {
    kind: 'all',
    lastMs,
    firstMs: Math.max(...held.map((w) => w.first)),
    rows: Math.min(...held.map((w) => w.rows)),
  };
}
