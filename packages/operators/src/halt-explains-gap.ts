import type { KlineType } from '@quoteflow/core';
import { expectedBarsBetween } from './expected-bars-between.js';

/** A halt of one product: from when trading stopped to when it resumed (`undefined`: not yet). */
export interface Halt {
  readonly code: string;
  readonly fromMs: number;
  readonly toMs: number | undefined;
}

/**
 * Whether a halt of `code` explains the bars missing between two bars seen at `afterMs` and
 * `beforeMs`: one that began at or before the first bar the calendar expects after `afterMs` and
 * lasted until `beforeMs` (or has not ended). A hole only partly covered by a halt stays a gap.
 *
 * @example
 * ```ts
 * haltExplainsGap([{ code: '600000.SH', fromMs: t1, toMs: t2 }], '600000.SH', 8, before, after);
 * ```
 */
export function haltExplainsGap(
  halts: readonly Halt[],
  code: string,
  klineType: KlineType,
  afterMs: number,
  beforeMs: number,
): boolean {
  const firstMissing = expectedBarsBetween(code, klineType, afterMs, beforeMs).firstMs ?? afterMs;
  return halts.some((h) => h.code === code && h.fromMs <= firstMissing && (h.toMs ?? Infinity) >= beforeMs);
}
