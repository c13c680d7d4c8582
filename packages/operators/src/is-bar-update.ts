import type { BarUpdate } from '@quoteflow/core';

/**
 * Type guard for `mergeBars` output: `true` for a `BarUpdate`, `false` for a `GapMarker`.
 *
 * @example
 * ```ts
 * bars$.pipe(mergeBars(), filter(isBarUpdate), resampleBars({ to: 6 }));
 * ```
 */
export function isBarUpdate(x: { readonly type: string }): x is BarUpdate {
  return x.type === 'bar-update';
}
