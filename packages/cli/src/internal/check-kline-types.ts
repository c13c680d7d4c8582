import { type KlineType } from '@quoteflow/core';
import { hasKlineType } from '@quoteflow/core/internal';
import { UsageError } from './usage-error.js';

/**
 * Refuses, before any request or file, a kline type that a code's product class does not have
 * (stock and index codes have no 2-hour or 4-hour bars), naming the flag and the codes.
 */
export function checkKlineTypes(
  codes: readonly string[],
  klineTypes: readonly KlineType[],
  flag: string,
): void {
  for (const klineType of klineTypes) {
    const problem = klineTypeProblem(codes, klineType);
    if (problem !== undefined) throw new UsageError(`${flag} ${klineType}: ${problem}`);
  }
}

/** Why some of `codes` cannot have bars of `klineType`, or `undefined` when all can. */
export function klineTypeProblem(codes: readonly string[], klineType: KlineType): string | undefined {
  const without = codes.filter((code) => !hasKlineType(code, klineType));
  if (without.length === 0) return undefined;
  const shown = without.slice(0, 5).join(', ') + (without.length > 5 ? `, … (${without.length} codes)` : '');
  return `stock and index codes have no ${klineType === 6 ? '2-hour' : '4-hour'} bars (${shown}); use 1-5 or 8-10 for them`;
}
