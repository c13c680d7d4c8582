// The sinks benches' synthetic 1-minute bars: series `s` (codes X00000USDT, X00001USDT, …), minute
// `m` of 2026-10-05 (UTC), prices that move a little from minute to minute.
import type { Bar, BarUpdate } from '@quoteflow/core';

export const BENCH_DAY_START = Date.UTC(2026, 9, 5);

/** Series `s`'s bar of minute `m`, read two minutes after it opened. */
export function benchBar(s: number, m: number): Bar {
  const tsMs = BENCH_DAY_START + m * 60_000;
  const p = 100 + (s % 50) + Math.sin(m + s);
  return {
    type: 'bar',
    code: `X${String(s).padStart(5, '0')}USDT`,
    klineType: 1,
    tsMs,
    open: p,
    high: p + 0.1,
    low: p - 0.1,
    close: p + 0.05,
    volume: 10 + (m % 7),
    turnover: 1_000 + m,
    readAtMs: tsMs + 120_000,
    receivedAtMs: tsMs + 120_100,
  };
}

/** {@link benchBar} as the closed bar a sync hands its sinks (final, read a minute after it opened). */
export function benchUpdate(s: number, m: number): BarUpdate {
  const bar = benchBar(s, m);
  return {
    ...bar,
    type: 'bar-update',
    readAtMs: bar.tsMs + 61_000,
    receivedAtMs: bar.tsMs + 61_050,
    final: true,
    revision: 0,
  };
}

/** The `p`th percentile of `xs` (nearest rank). */
export const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
