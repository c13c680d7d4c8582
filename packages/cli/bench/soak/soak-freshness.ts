// Freshness of the soak's 1-minute bars: from a bar's close (its start + 1 minute) to when its final
// values were read (`read_at` in the table), per product class and simulated day, leaving out the
// bars that closed while the sync was down or starting (from a kill -9 to its /ready: those are
// read by the restart's backfill, and their wait is the restart's, not the live poll's).
import { DAY_MS } from './soak-config.js';
import type { HeldBar } from './soak-verify.js';

const MINUTE_MS = 60_000;

/** The market of `quoteflow plan` a product class polls with (`LiveMarket`). */
export function marketOfCode(code: string, productClass: string): string {
  if (code.endsWith('.US')) return 'US';
  if (code.endsWith('.HK')) return 'HK';
  if (code.endsWith('.SH') || code.endsWith('.SZ')) return 'CN';
  return productClass === 'crypto' ? 'crypto' : 'FX & CFD';
}

export interface FreshnessCell {
  readonly productClass: string;
  readonly day: number;
  readonly bars: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/**
 * Per class and day (0 = the first simulated day), the freshness of the closed 1-minute bars that
 * closed in [startMs, endMs) outside `downtimes` (each [from, to) in market ms).
 */
export function freshnessByClassAndDay(
  bars: readonly HeldBar[],
  classOf: ReadonlyMap<string, string>,
  window: { startMs: number; endMs: number },
  downtimes: readonly (readonly [number, number])[],
): FreshnessCell[] {
  const cells = new Map<string, { productClass: string; day: number; waits: number[] }>();
  for (const b of bars) {
    if (b.klineType !== 1) continue;
    const closeMs = b.tsMs + MINUTE_MS;
    if (closeMs < window.startMs || closeMs >= window.endMs) continue;
    if (downtimes.some(([from, to]) => closeMs >= from && closeMs < to)) continue;
    const productClass = classOf.get(b.code) ?? 'unknown';
    const day = Math.floor((closeMs - window.startMs) / DAY_MS);
    const k = `${productClass}\u0000${day}`;
    let cell = cells.get(k);
    if (cell === undefined) cells.set(k, (cell = { productClass, day, waits: [] }));
    cell.waits.push(b.readAtMs - closeMs);
  }
  return [...cells.values()].map(({ productClass, day, waits }) => {
    waits.sort((a, b) => a - b);
    return {
      productClass,
      day,
      bars: waits.length,
      p50Ms: quantile(waits, 0.5),
      p99Ms: quantile(waits, 0.99),
      maxMs: waits.at(-1) ?? Number.NaN,
    };
  });
}
