import { type KlineType } from '@quoteflow/core';
import { KLINE_PERIOD_MS } from '@quoteflow/core/internal';
import type { DatasetBar } from '@quoteflow/pipelines';

const DAY_MS = 86_400_000;

/** One candle: `[tsSeconds, open, high, low, close, volume]`. */
export type Candle = readonly [number, number, number, number, number, number];

/** A series' candles: one per bar of its own period, the newest ones. */
export interface CandleList {
  /** Length of one candle (ms): the series' bar period (a day for daily and longer bars). */
  readonly candleMs: number;
  readonly candles: readonly Candle[];
}

/** A bar's length for the candles: the kline type's period, a day for daily and longer bars. */
export function periodOf(klineType: KlineType): number {
  return KLINE_PERIOD_MS[klineType] ?? DAY_MS;
}

/**
 * One candle per bar (never folded into longer candles: 1-minute data is drawn as 1-minute
 * candles), the newest `maxCandles` of them; a start held twice is one candle (first open, extremes,
 * last close, summed volume). `bars` in start order.
 */
export function candlesOf(bars: readonly DatasetBar[], maxCandles: number): Candle[] {
  const out: [number, number, number, number, number, number][] = [];
  for (const b of bars) {
    const t = Math.floor(b.tsMs / 1000);
    const last = out.at(-1);
    if (last !== undefined && last[0] === t) {
      last[2] = Math.max(last[2], b.high);
      last[3] = Math.min(last[3], b.low);
      last[4] = b.close;
      last[5] += b.volume ?? 0;
    } else out.push([t, b.open, b.high, b.low, b.close, b.volume ?? 0]);
  }
  return out.slice(Math.max(0, out.length - maxCandles));
}
