import { describe, expect, it } from 'vitest';
import type { Bar, KlineType } from '@quoteflow/core';
import { LivePollPlanner } from './live-poll-planner.js';
import { calendarOf } from '@quoteflow/core';
import { mayTradeAt } from '@quoteflow/core/internal';

const at = (iso: string) => Date.parse(iso);
const GRACE = 15_000;
const bar = (code: string, klineType: KlineType, tsMs: number): Bar =>
  ({
    type: 'bar',
    code,
    klineType,
    tsMs,
    open: 1,
    high: 1,
    low: 1,
    close: 1,
    volume: 1,
    turnover: 1,
    readAtMs: tsMs,
  }) as Bar;
const codes = (groups: { code: string; klineType: number }[]) =>
  groups.map((g) => `${g.code}:${g.klineType}`);

describe('LivePollPlanner', () => {
  it('polls a US stock while New York trades, once right after the close for the final bar, then not until the next open', () => {
    const p = new LivePollPlanner([{ code: 'AAPL.US', klineType: 1 }], GRACE, 500);
    // Tuesday 2026-11-24: the session is 14:30-21:00 UTC.
    expect(codes(p.select(at('2026-11-24T09:00:00Z')))).toEqual([]);
    expect(codes(p.select(at('2026-11-24T14:29:30Z')))).toEqual(['AAPL.US:1']); // a minute early
    expect(codes(p.select(at('2026-11-24T20:59:58Z')))).toEqual(['AAPL.US:1']);
    p.observe([bar('AAPL.US', 1, at('2026-11-24T20:59:00Z'))]);
    expect(codes(p.select(at('2026-11-24T21:00:05Z')))).toEqual([]); // closed, final read not yet due
    expect(codes(p.select(at('2026-11-24T21:00:15Z')))).toEqual(['AAPL.US:1']); // close + grace
    expect(codes(p.select(at('2026-11-24T21:00:17Z')))).toEqual([]);
    expect(codes(p.select(at('2026-11-25T03:00:00Z')))).toEqual([]);
    expect(p.counts).toEqual({ polled: 3, skippedClosed: 4 });
  });

  it('skips Thanksgiving and the weekend, and polls Hong Kong around its lunch break only while it trades', () => {
    expect(mayTradeAt(calendarOf('AAPL.US'), at('2026-11-26T16:00:00Z'))).toBe(false); // Thanksgiving
    expect(mayTradeAt(calendarOf('AAPL.US'), at('2026-11-28T16:00:00Z'))).toBe(false); // Saturday
    expect(mayTradeAt(calendarOf('700.HK'), at('2026-11-24T02:00:00Z'))).toBe(true); // 10:00 HK
    expect(mayTradeAt(calendarOf('700.HK'), at('2026-11-24T04:30:00Z'))).toBe(false); // 12:30 HK, lunch
    expect(mayTradeAt(calendarOf('700.HK'), at('2026-11-24T05:30:00Z'))).toBe(true); // 13:30 HK
  });

  it('polls crypto always, forex not on Saturday nor Sunday before 17:00 New York, but on Friday evening UTC', () => {
    expect(mayTradeAt(calendarOf('BTCUSDT'), at('2026-11-28T12:00:00Z'))).toBe(true);
    expect(mayTradeAt(calendarOf('EURUSD'), at('2026-11-28T12:00:00Z'))).toBe(false);
    expect(mayTradeAt(calendarOf('EURUSD'), at('2026-11-29T21:00:00Z'))).toBe(false); // 16:00 New York
    expect(mayTradeAt(calendarOf('EURUSD'), at('2026-11-29T22:01:00Z'))).toBe(true);
    expect(mayTradeAt(calendarOf('EURUSD'), at('2026-11-27T23:00:00Z'))).toBe(true); // after the NY close, before Saturday UTC
  });

  it('reads daily bars at most every 60 s while open, but the bar that just closed first, at once', () => {
    const p = new LivePollPlanner(
      [
        { code: 'BTCUSDT', klineType: 1 },
        { code: 'ETHUSDT', klineType: 8 },
      ],
      GRACE,
      500,
    );
    expect(codes(p.select(at('2026-11-24T23:59:00Z')))).toEqual(['BTCUSDT:1', 'ETHUSDT:8']);
    p.observe([bar('ETHUSDT', 8, at('2026-11-24T00:00:00Z')), bar('BTCUSDT', 1, at('2026-11-24T23:59:00Z'))]);
    expect(codes(p.select(at('2026-11-24T23:59:30Z')))).toEqual(['BTCUSDT:1']);
    p.observe([bar('BTCUSDT', 1, at('2026-11-25T00:00:00Z'))]); // forming: its final read is due at 00:01:15
    // 00:00:15: the daily bar's final read comes first, before the routine read of the 1-minute bar.
    expect(codes(p.select(at('2026-11-25T00:00:15Z')))).toEqual(['ETHUSDT:8', 'BTCUSDT:1']);
    expect(codes(p.select(at('2026-11-25T00:00:20Z')))).toEqual(['BTCUSDT:1']);
    expect(codes(p.select(at('2026-11-25T00:01:15Z')))).toEqual(['BTCUSDT:1', 'ETHUSDT:8']); // BTC urgent
  });

  it('adds no request for the forming values of daily bars: they fill the last request, or wait up to 30 minutes', () => {
    const minute = Array.from({ length: 4 }, (_, i) => ({ code: `M${i}USDT`, klineType: 1 as const }));
    const daily = Array.from({ length: 60 }, (_, i) => ({ code: `D${i}USDT`, klineType: 8 as const }));
    const p = new LivePollPlanner([...minute, ...daily], GRACE, 4); // 4 groups per request
    const t0 = at('2026-11-24T12:00:00Z');
    // Never read: every daily series starves, so each poll brings a 30th of them (2) along, until all
    // were read once.
    for (let s = 0; s < 30; s++) expect(p.select(t0 + s * 1_000)).toHaveLength(4 + 2);
    // Then the 1-minute series fill whole requests: no room, and no daily series starves yet.
    for (let s = 30; s < 90; s++) expect(p.select(t0 + s * 1_000)).toHaveLength(4);
    // 30 minutes after their read the first ones starve: two more per poll, longest waiting first.
    const late = p.select(t0 + 30 * 60_000);
    expect(codes(late).slice(4)).toEqual(['D0USDT:8', 'D1USDT:8']);
  });

  it('asks for a joining series at every poll, after those it had, whatever its market’s hours, until it is answered; a removed one no more', () => {
    const p = new LivePollPlanner([{ code: 'BTCUSDT', klineType: 1 }], GRACE, 500);
    const saturday = at('2026-11-28T12:00:00Z'); // New York closed
    p.add({ code: 'AAPL.US', klineType: 1 }, true);
    p.add({ code: 'BTCUSDT', klineType: 1 }, true); // in the poll already: unchanged
    expect(codes(p.select(saturday))).toEqual(['BTCUSDT:1', 'AAPL.US:1']);
    expect(codes(p.select(saturday + 1_000))).toEqual(['BTCUSDT:1', 'AAPL.US:1']); // not answered yet
    p.joined('AAPL.US', 1);
    expect(codes(p.select(saturday + 2_000))).toEqual(['BTCUSDT:1']); // its calendar decides now
    p.remove([{ code: 'BTCUSDT', klineType: 1 }]);
    expect(codes(p.select(saturday + 3_000))).toEqual([]);
    expect(p.size).toBe(1);
  });
});
