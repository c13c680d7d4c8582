import { KLINE_PERIOD_MS, type KlineType } from '@quoteflow/core';
import type { DatasetBar } from '@quoteflow/pipelines';

const DAY_MS = 86_400_000;

/** One candle: `[tsSeconds, open, high, low, close, volume]`. */
export type Candle = readonly [number, number, number, number, number, number];

/** A series' candles and the length of one. */
export interface CandleList {
  readonly candleMs: number;
  readonly candles: readonly Candle[];
}

/** A bar's length for the candles: the kline type's period, a day for daily and longer bars. */
export function periodOf(klineType: KlineType): number {
  return KLINE_PERIOD_MS[klineType] ?? DAY_MS;
}

/**
 * One candle's length for a series of `rows` bars spanning `spanMs` (first to last start): its bar
 * period, or a multiple of it so that about `maxCandles` candles cover it. Daily and longer bars
 * stay one candle each (their lengths differ).
 */
export function candleLengthOf(
  klineType: KlineType,
  rows: number,
  spanMs: number,
  maxCandles: number,
): number {
  const period = periodOf(klineType);
  if (KLINE_PERIOD_MS[klineType] === undefined || rows <= maxCandles) return period;
  return Math.ceil((spanMs + period) / maxCandles / period) * period;
}

/** One candle per bar, or bars folded into `candleMs` buckets (first open, extremes, last close, summed volume). */
export function candlesOf(
  bars: readonly DatasetBar[],
  candleMs: number,
  onePerBar: boolean,
): [number, number, number, number, number, number][] {
  const out: [number, number, number, number, number, number][] = [];
  for (const b of bars) {
    const start = onePerBar ? b.tsMs : Math.floor(b.tsMs / candleMs) * candleMs;
    const t = Math.floor(start / 1000);
    const last = out.at(-1);
    if (last !== undefined && last[0] === t) {
      last[2] = Math.max(last[2], b.high);
      last[3] = Math.min(last[3], b.low);
      last[4] = b.close;
      last[5] += b.volume ?? 0;
    } else out.push([t, b.open, b.high, b.low, b.close, b.volume ?? 0]);
  }
  return out;
}
