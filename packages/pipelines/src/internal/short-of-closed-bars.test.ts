import { type Bar, type GapMarker, type KlineType } from '@quoteflow/core';
import { HISTORY_GAP_REASONS } from '@quoteflow/core/internal';
import { describe, expect, it } from 'vitest';
import { shortOfClosedBars } from './short-of-closed-bars.js';

const GRACE_MS = 15_000;

/** `count` consecutive bars of `stepMs` ending with the one that starts at `lastIso`, read at `readIso`. */
function bars(
  code: string,
  klineType: KlineType,
  stepMs: number,
  count: number,
  lastIso: string,
  readIso: string,
): Bar[] {
  const last = Date.parse(lastIso);
  const readAtMs = Date.parse(readIso);
  return Array.from({ length: count }, (_, i) => ({
    type: 'bar' as const,
    code,
    klineType,
    tsMs: last - (count - 1 - i) * stepMs,
    open: 1,
    high: 1,
    low: 1,
    close: 1,
    volume: 0,
    turnover: 0,
    readAtMs,
    receivedAtMs: readAtMs + 5,
  }));
}

const gap = (code: string, klineType: KlineType, why: string, got: number, asked: number): GapMarker => ({
  type: 'gap',
  code,
  klineType,
  fromMs: undefined,
  toMs: undefined,
  reason: `${code} kline_type ${klineType}: ${why}; got ${got} of ${asked} bars`,
});

describe('shortOfClosedBars', () => {
  // Wednesday 2026-03-11: New York trades 13:30 to 20:00 UTC (daylight saving time).
  it('reports nothing when a stock page of N bars ends with a closed bar (--bars 500, market closed)', () => {
    const got = bars('AAPL.US', 1, 60_000, 500, '2026-03-11T19:59:00Z', '2026-03-11T20:05:00Z');
    const marker = gap('AAPL.US', 1, HISTORY_GAP_REASONS.cannotPage, 500, 501);
    expect(shortOfClosedBars(marker, got.at(-1), got.length, 500, GRACE_MS)).toBeUndefined();
  });

  it('counts a forming newest bar out and states the shortfall in the N closed bars asked for', () => {
    const got = bars('AAPL.US', 1, 60_000, 500, '2026-03-11T19:59:00Z', '2026-03-11T19:59:30Z');
    const marker = gap('AAPL.US', 1, HISTORY_GAP_REASONS.cannotPage, 500, 501);
    expect(shortOfClosedBars(marker, got.at(-1), got.length, 500, GRACE_MS)?.reason).toBe(
      `AAPL.US kline_type 1: ${HISTORY_GAP_REASONS.cannotPage}; got 499 of 500 closed bars`,
    );
  });

  it('says how many closed bars the service had when it ran out before N', () => {
    // Weekly crypto bars, the newest still forming: 115 read for --bars 200 (201 asked).
    const got = bars('BTCUSDT', 9, 7 * 86_400_000, 115, '2026-03-09T00:00:00Z', '2026-03-11T12:00:00Z');
    const marker = gap('BTCUSDT', 9, HISTORY_GAP_REASONS.exhausted, 115, 201);
    expect(shortOfClosedBars(marker, got.at(-1), got.length, 200, GRACE_MS)).toMatchObject({
      type: 'gap',
      code: 'BTCUSDT',
      klineType: 9,
      reason: `BTCUSDT kline_type 9: ${HISTORY_GAP_REASONS.exhausted}; got 114 of 200 closed bars`,
    });
  });

  it('reports an empty answer as 0 of N', () => {
    const marker = gap('BTCUSDT', 1, HISTORY_GAP_REASONS.exhausted, 0, 11);
    expect(shortOfClosedBars(marker, undefined, 0, 10, GRACE_MS)?.reason).toBe(
      `BTCUSDT kline_type 1: ${HISTORY_GAP_REASONS.exhausted}; got 0 of 10 closed bars`,
    );
  });
});
