import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calendarOf, type Bar, type GapMarker, type KlineType } from '@quoteflow/core';
import { HISTORY_GAP_REASONS, isBarClosedAt, mayTradeAt } from '@quoteflow/core/internal';
import { createBarMerger, type MergeBarsOutput } from '@quoteflow/operators';
import { SIM_CALENDARS, SIM_KLINE_PERIOD_MS, simBarPeriodAt } from '@quoteflow/simulator/internal';
import {
  SIM_DAILY_LABELLINGS,
  SIM_INTRADAY_LABELLINGS,
  SIM_PERIOD_LABELLINGS,
  type SimCalendar,
} from '@quoteflow/simulator';
import { LivePollPlanner } from './live-poll-planner.js';
import { settleAtMs } from './settle-delay.js';
import { shortOfClosedBars } from './short-of-closed-bars.js';

// Read planning's idea of "closed" and the merger's, held together (issue 36 item 1): on random
// series of every market, kline type and bar labelling, the bar the simulator serves (its own
// calendar, independent of core's: the oracle of where a bar ends) is final in `mergeBars` for a
// read at an instant exactly when core's `isBarClosedAt` says it is closed then, and each planner
// acts on that same answer: the backfill's count of closed bars, the live poll's final read and
// the settle step's re-read.

/** A product of each simulated market, and the kline types its codes have. */
const MARKETS: readonly { code: string; sim: SimCalendar; types: readonly KlineType[] }[] = [
  { code: 'AAPL.US', sim: SIM_CALENDARS.us, types: [1, 2, 3, 4, 5, 8, 9, 10] },
  { code: '700.HK', sim: SIM_CALENDARS.hk, types: [1, 2, 3, 4, 5, 8, 9, 10] },
  { code: '600416.SH', sim: SIM_CALENDARS.cn, types: [1, 2, 3, 4, 5, 8, 9, 10] },
  { code: '000627.SZ', sim: SIM_CALENDARS.cn, types: [1, 5, 8, 9] },
  { code: 'BTCUSDT', sim: SIM_CALENDARS.crypto, types: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
  { code: 'EURUSD', sim: SIM_CALENDARS.weekdays, types: [1, 5, 7, 8, 9, 10] },
];

const DAY_MS = 86_400_000;
/** Where the two calendars are checked to agree (test/calendar-conformance.test.ts). */
const FROM_MS = Date.UTC(2024, 0, 8);
const TO_MS = Date.UTC(2026, 10, 30);

/** One random bar as the simulator serves it, one random read of it, and a grace. */
const arbitraryCase = fc
  .record({
    market: fc.constantFrom(...MARKETS),
    pick: fc.nat(),
    atMs: fc.integer({ min: FROM_MS, max: TO_MS }),
    labelling: fc.record({
      intraday: fc.constantFrom(...SIM_INTRADAY_LABELLINGS),
      daily: fc.constantFrom(...SIM_DAILY_LABELLINGS),
      weekly: fc.constantFrom(...SIM_PERIOD_LABELLINGS),
      monthly: fc.constantFrom(...SIM_PERIOD_LABELLINGS),
    }),
    // Where the read falls: in the bar, around its end, or days later.
    readFrac: fc.double({ min: 0, max: 1, noNaN: true }),
    readLateMs: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 120_000 }),
      fc.integer({ min: 0, max: 4 * DAY_MS }),
    ),
    graceMs: fc.constantFrom(0, 5_000, 15_000, 60_000),
  })
  .map((c) => {
    const klineType = c.market.types[c.pick % c.market.types.length]!;
    const period = simBarPeriodAt(c.atMs, klineType, c.market.sim, c.labelling);
    if (period === undefined) return undefined; // a stock instant outside its sessions: no bar
    const { tradesFromMs, endMs } = period;
    const readAtMs = tradesFromMs + Math.floor(c.readFrac * (endMs - tradesFromMs)) + c.readLateMs;
    return { ...c, klineType, labelMs: period.startMs, tradesFromMs, endMs, readAtMs };
  })
  .filter((c): c is NonNullable<typeof c> => c !== undefined);

/**
 * Whether the calendar alone says where the bar ends, under every labelling: a stock's daily,
 * weekly or monthly bar (the close of its last session), any bar around the clock (its period).
 */
function endsByCalendar(c: {
  readonly market: { readonly sim: SimCalendar };
  readonly klineType: KlineType;
}): boolean {
  return c.market.sim.segments.length === 0 || SIM_KLINE_PERIOD_MS[c.klineType] === undefined;
}

function barOf(code: string, klineType: KlineType, tsMs: number, readAtMs: number): Bar {
  return {
    type: 'bar',
    code,
    klineType,
    tsMs,
    open: 10,
    high: 11,
    low: 9,
    close: 10.5,
    volume: 100,
    turnover: 1_050,
    readAtMs,
    receivedAtMs: readAtMs + 20,
  };
}

/** Whether `mergeBars` (its state machine) emits `bar`, the only bar of its series it saw, final. */
function mergerFinal(bar: Bar, graceMs: number): boolean {
  const out: MergeBarsOutput[] = [];
  createBarMerger({ graceMs }).push([bar], (o) => out.push(o));
  return out.some((o) => o.type === 'bar-update' && o.tsMs === bar.tsMs && o.final);
}

describe('read planning and mergeBars agree on "closed" (property)', () => {
  it('the merger proves a read final exactly when isBarClosedAt holds, and only once the bar has ended', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const cal = calendarOf(c.market.code);
        const closed = isBarClosedAt(c.labelMs, c.klineType, cal, c.readAtMs, c.graceMs);
        const what = `${c.market.code} ${c.klineType} ${new Date(c.labelMs).toISOString()} read ${new Date(c.readAtMs).toISOString()}`;
        expect(mergerFinal(barOf(c.market.code, c.klineType, c.labelMs, c.readAtMs), c.graceMs), what).toBe(
          closed,
        );
        // Safety, by the simulator's own calendar: nothing is closed before its last trade.
        if (closed) expect(c.readAtMs, what).toBeGreaterThanOrEqual(c.endMs);
        // And no later than needed where a bar ends with a close or its period (not an intraday
        // stock bar, whose end depends on the labelling: the day's close proves it).
        if (endsByCalendar(c) && c.readAtMs >= c.endMs + c.graceMs) expect(closed, what).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it('the backfill counts the newest bar of a read closed exactly when the merger proves it', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const bar = barOf(c.market.code, c.klineType, c.labelMs, c.readAtMs);
        const marker: GapMarker = {
          type: 'gap',
          code: c.market.code,
          klineType: c.klineType,
          fromMs: undefined,
          toMs: undefined,
          reason: `${c.market.code} kline_type ${c.klineType}: ${HISTORY_GAP_REASONS.exhausted}; got 1 of 2 bars`,
        };
        // Asked for one closed bar: no shortfall exactly when the one bar read is final.
        expect(shortOfClosedBars(marker, bar, 1, 1, c.graceMs) === undefined).toBe(
          mergerFinal(bar, c.graceMs),
        );
      }),
      { numRuns: 1_000 },
    );
  });

  it('the live poll reads a bar again, first, once a read proves it final, and not again while its market is closed', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const { code } = c.market;
        const planner = new LivePollPlanner([{ code, klineType: c.klineType }], c.graceMs, 500);
        // A poll while the bar traded brought it (not final then: it had not ended).
        planner.select(c.tradesFromMs);
        planner.observe([barOf(code, c.klineType, c.labelMs, c.tradesFromMs)]);
        const finalNow = mergerFinal(barOf(code, c.klineType, c.labelMs, c.readAtMs), c.graceMs);
        const chosen = planner.select(c.readAtMs).map((g) => g.code);
        if (finalNow) expect(chosen[0]).toBe(code);
        else if (!mayTradeAt(calendarOf(code), c.readAtMs)) expect(chosen).toEqual([]);
        // A bar the calendar ends: its final read comes once it ended (plus the grace), not later.
        if (endsByCalendar(c) && c.readAtMs >= c.endMs + c.graceMs) expect(chosen[0]).toBe(code);
        // Read once after it closed: nothing more for it while the market is closed.
        const later = c.readAtMs + 1_000;
        if (finalNow && !mayTradeAt(calendarOf(code), later)) expect(planner.select(later)).toEqual([]);
      }),
      { numRuns: 1_000 },
    );
  });

  it('the settle step re-reads a bar when a read can prove it: the merger by the calendar, or after the bar ended (a newer bar)', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const { code } = c.market;
        const at = settleAtMs(c.labelMs, c.readAtMs, code, c.klineType, c.graceMs);
        if (at === undefined) {
          // Not closed by the calendar when read (the merger would not have proven it then either).
          expect(mergerFinal(barOf(code, c.klineType, c.labelMs, c.readAtMs), 0)).toBe(false);
          return;
        }
        const byCalendar = mergerFinal(barOf(code, c.klineType, c.labelMs, at), c.graceMs);
        // Otherwise an intraday bar whose period is over: the newer bar an answer then holds proves it.
        if (!byCalendar) {
          expect(SIM_KLINE_PERIOD_MS[c.klineType]).toBeDefined();
          expect(at - c.graceMs).toBeGreaterThanOrEqual(c.endMs);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
