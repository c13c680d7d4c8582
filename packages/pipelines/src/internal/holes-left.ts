import { calendarOf, type Bar, type GapMarker, type KlineType } from '@quoteflow/core';
import { barsMissingBetween } from '@quoteflow/core/internal';
import type { BarMergerOptions } from '@quoteflow/operators';

/**
 * What a re-read of history leaves of a hole `mergeBars` reported (`missing-bars`: a label came
 * with bars the calendar expects missing before it): the stretches between the hole's ends and
 * the re-read's bars inside it where bars are still missing, by the rule the merger applies (core's
 * `barsMissingBetween` under every labelling, unless a halt explains them). A re-read from the
 * hole's start sees every bar the service has there, so an empty answer means the hole was only
 * history that had not landed yet (a restart's first poll ahead of its backfill, polls that skip
 * bars): nothing to report.
 */
export function holesLeft(
  gap: GapMarker & { readonly fromMs: number; readonly toMs: number },
  klineType: KlineType,
  reread: readonly Bar[],
  isHalted?: BarMergerOptions['isHalted'],
): GapMarker[] {
  const inside = reread.map((b) => b.tsMs).filter((ts) => ts > gap.fromMs && ts < gap.toMs);
  const labels = [gap.fromMs, ...new Set(inside), gap.toMs].sort((a, b) => a - b);
  const calendar = calendarOf(gap.code);
  const left: GapMarker[] = [];
  for (let i = 1; i < labels.length; i++) {
    const [a, b] = [labels[i - 1]!, labels[i]!];
    if (!barsMissingBetween(a, b, klineType, calendar)) continue;
    if (isHalted?.(gap.code, klineType, a, b) === true) continue;
    left.push({ ...gap, fromMs: a, toMs: b });
  }
  return left;
}
