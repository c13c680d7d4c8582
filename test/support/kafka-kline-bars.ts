/**
 * The K-line bars of the Kafka exactly-once tests: bar `i` of a series has fixed values, so a test
 * knows what each committed record must hold whichever process sent it.
 */
import type { BarUpdate } from '@quoteflow/core';

export const BARS_T0 = Date.UTC(2026, 2, 2, 1, 30);
export const BAR_MS = 60_000;

/** Bar `i` of `code` (1-minute bars from BARS_T0), final or still forming. */
export function klineBar(code: string, i: number, final = true): BarUpdate {
  const c = [...code].reduce((n, ch) => n + ch.charCodeAt(0), 0) % 97;
  return {
    type: 'bar-update',
    code,
    klineType: 1,
    tsMs: BARS_T0 + i * BAR_MS,
    open: 100 + c + i / 4,
    high: 101.5 + c + i / 4,
    low: 99.25 + c + i / 4,
    close: 100.125 + c + i / 4,
    volume: i % 9 === 4 ? null : 1_000 + i,
    turnover: (1_000 + i) * (100 + c),
    readAtMs: BARS_T0 + (i + 1) * BAR_MS + 2_000,
    receivedAtMs: BARS_T0 + (i + 1) * BAR_MS + 2_040,
    final,
    revision: final ? 1 : 0,
  };
}

/** What the contract says a final bar's message value holds, built from the bar without the sinks. */
export function expectedKlineValue(code: string, i: number): Record<string, unknown> {
  const b = klineBar(code, i);
  return {
    code,
    kline_type: 1,
    ts: new Date(b.tsMs).toISOString(),
    open: b.open,
    high: b.high,
    low: b.low,
    close: b.close,
    volume: b.volume,
    turnover: b.turnover,
    read_at: new Date(b.readAtMs).toISOString(),
    final: true,
  };
}

/** The index of the bar starting at `tsMs`. */
export function barIndexOf(tsMs: number): number {
  return (tsMs - BARS_T0) / BAR_MS;
}
