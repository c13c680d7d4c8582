import { calendarOf, type KlineType, type TradingCalendar } from '@quoteflow/core';
import {
  EXCHANGE_CALENDARS,
  barFinalAfterMs,
  barPeriodAt,
  barsMissingBetween,
  isWeeklyMarketOpenAt,
  surelyTradingMsBetween,
  tradingDateOf,
  tradingSegmentsOn,
} from '@quoteflow/core/internal';
import { type SimLabelling, type SimCalendar } from '@quoteflow/simulator';
import {
  SIM_CALENDARS,
  SIM_LABELLINGS,
  isTradingAt,
  sessionsOfDay,
  simBarPeriodAt,
} from '@quoteflow/simulator/internal';
import { describe, expect, it } from 'vitest';

// Core's calendar (generated from exchange_calendars) against the simulator's (generated from the
// holidays package, its own session code): two implementations that share no code or data source.
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const FIRST_DAY = Date.UTC(2024, 0, 1) / DAY_MS;
const LAST_DAY = Date.UTC(2026, 11, 31) / DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString();
const dateOf = (day: number) => iso(day * DAY_MS).slice(0, 10);
const localDate = (day: number): [number, number, number] => {
  const d = new Date(day * DAY_MS);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
};

const MARKETS: readonly { name: string; core: TradingCalendar; sim: SimCalendar }[] = [
  { name: 'XNYS', core: EXCHANGE_CALENDARS.XNYS, sim: SIM_CALENDARS.us },
  { name: 'XNAS', core: EXCHANGE_CALENDARS.XNAS, sim: SIM_CALENDARS.us },
  { name: 'XHKG', core: EXCHANGE_CALENDARS.XHKG, sim: SIM_CALENDARS.hk },
  { name: 'XSHG', core: EXCHANGE_CALENDARS.XSHG, sim: SIM_CALENDARS.cn },
  { name: 'XSHE', core: EXCHANGE_CALENDARS.XSHE, sim: SIM_CALENDARS.cn },
];

/** Weeks that hold a DST change, a half day, Lunar New Year or Golden Week, as Mondays. */
const SPECIAL_WEEKS = [
  '2024-03-11', // US DST starts (Sunday 10th)
  '2024-11-04', // US DST ends
  '2024-11-25', // Thanksgiving, half day Friday
  '2025-01-27', // Lunar New Year: HK half day eve, A shares closed
  '2025-03-10',
  '2025-06-30', // 3 July half day, 4 July closed
  '2025-12-22', // Christmas Eve half day, Christmas
  '2026-02-16', // A shares closed all week
  '2026-03-09',
  '2026-09-28', // Golden Week
  '2026-11-02',
].map((d) => Date.parse(`${d}T00:00:00Z`) / DAY_MS);

describe('core calendar vs simulator calendar', () => {
  it('agrees on every day of 2024-2026: sessions, lunch breaks, holidays, half days, DST', () => {
    const disagreements: string[] = [];
    // What was compared: trading days, and days split by a lunch break, per market (so that two
    // calendars that both knew no session at all could not agree).
    const compared = new Map<string, { days: number; lunchBreaks: number }>();
    for (const m of MARKETS) {
      const counts = { days: 0, lunchBreaks: 0 };
      compared.set(m.name, counts);
      for (let day = FIRST_DAY; day <= LAST_DAY; day++) {
        const segments = tradingSegmentsOn(m.core, localDate(day));
        const core = segments.map(([s, e]) => `${iso(s)}-${iso(e)}`);
        const sim = sessionsOfDay(m.sim, day).map(([s, e]) => `${iso(s)}-${iso(e)}`);
        if (core.join() !== sim.join())
          disagreements.push(`${m.name} ${dateOf(day)}: core [${core.join()}] sim [${sim.join()}]`);
        if (segments.length > 0) counts.days++;
        if (segments.length > 1) counts.lunchBreaks++;
      }
    }
    expect(disagreements).toEqual([]);
    // About 250 trading days a year; Hong Kong and the A shares break for lunch, New York does not.
    for (const [name, counts] of compared) {
      expect(counts.days, name).toBeGreaterThan(3 * 235);
      expect(counts.days, name).toBeLessThan(3 * 256);
      if (name === 'XHKG' || name === 'XSHG' || name === 'XSHE')
        expect(counts.lunchBreaks, name).toBeGreaterThan(3 * 200);
      else expect(counts.lunchBreaks, name).toBe(0);
    }
  });

  it('agrees on the forex week: the simulator trades where every provider does, and only where one may', () => {
    const fx = SIM_CALENDARS.weekdays;
    let surelyQuarters = 0;
    let closedQuarters = 0;
    for (let t = FIRST_DAY * DAY_MS; t < (LAST_DAY + 1) * DAY_MS; t += HOUR_MS / 4) {
      const sim = isTradingAt(fx, t);
      const surely = surelyTradingMsBetween(t, t + 1) > 0;
      // The simulator's week ends at Saturday 00:00 UTC, after the New York close: a reading core allows.
      const maybe = isWeeklyMarketOpenAt(t) || new Date(t).getUTCDay() === 5;
      if (surely) expect(sim, `sim closed at ${iso(t)}`).toBe(true);
      if (sim) expect(maybe, `sim open at ${iso(t)}`).toBe(true);
      if (surely) surelyQuarters++;
      if (!sim) closedQuarters++;
    }
    // Both sides were seen: most quarter hours trade surely, and the weekends close (48 h a week).
    const quarters = ((LAST_DAY + 1 - FIRST_DAY) * DAY_MS) / (HOUR_MS / 4);
    expect(surelyQuarters).toBeGreaterThan(quarters * 0.6);
    expect(closedQuarters).toBeGreaterThan(quarters * 0.25);
  });

  for (const labelling of SIM_LABELLINGS) {
    const tag = Object.values(labelling).join(',');

    it(`names each daily, weekly and monthly bar's close and trading date as the simulator serves them (${tag})`, () => {
      for (const m of MARKETS) {
        for (const klineType of [8, 9, 10] as const) {
          for (const bar of simBars(m.sim, klineType, labelling, FIRST_DAY, LAST_DAY)) {
            const what = `${m.name} ${klineType} ${iso(bar.startMs)}`;
            expect(iso(barFinalAfterMs(bar.startMs, klineType, m.core)), what).toBe(iso(bar.endMs));
            if (klineType === 8)
              expect(tradingDateOf(bar.startMs, m.core), what).toBe(
                iso(bar.tradesFromMs + 8 * HOUR_MS).slice(0, 10), // the Asian date; New York's too
              );
          }
        }
      }
    });

    it(`reports no gap between consecutive bars the simulator serves, in special weeks (${tag})`, () => {
      // Intraday bars depend on the intraday axis only: check each of its values once.
      const firstWithIntraday = SIM_LABELLINGS.find((l) => l.intraday === labelling.intraday) === labelling;
      const klineTypes = firstWithIntraday ? ([1, 5, 8, 9, 10] as const) : ([8, 9, 10] as const);
      for (const m of MARKETS) {
        for (const klineType of klineTypes) {
          const first = klineType >= 8 ? FIRST_DAY : 0;
          const days = klineType >= 8 ? [[first, LAST_DAY]] : SPECIAL_WEEKS.map((w) => [w - 1, w + 7]);
          for (const [from, to] of days as [number, number][]) {
            const bars = simBars(m.sim, klineType, labelling, from, to);
            for (let i = 1; i < bars.length; i++) {
              const [a, b] = [bars[i - 1]!.startMs, bars[i]!.startMs];
              expect(
                barsMissingBetween(a, b, klineType, m.core),
                `${m.name} ${klineType} ${iso(a)} → ${iso(b)}`,
              ).toBe(false);
            }
          }
        }
      }
    });
  }

  it('bounds each session-labelled intraday bar as the simulator does, lunch breaks and half days included', () => {
    const labelling = SIM_LABELLINGS[0]!;
    expect(labelling.intraday).toBe('session');
    for (const m of MARKETS) {
      for (const klineType of [1, 2, 3, 4, 5] as const) {
        for (const week of SPECIAL_WEEKS) {
          for (const bar of simBars(m.sim, klineType, labelling, week - 1, week + 7)) {
            const core = barPeriodAt(bar.startMs, klineType, m.core);
            expect(core, `${m.name} ${klineType} ${iso(bar.startMs)}`).toEqual({
              startMs: bar.startMs,
              endMs: bar.endMs,
            });
          }
        }
      }
    }
  });

  it('reports no gap over forex weekends and holidays in the simulator daily and hourly EURGBP bars', () => {
    const fx = calendarOf('EURGBP');
    for (const klineType of [5, 8] as const) {
      const bars = simBars(SIM_CALENDARS.weekdays, klineType, SIM_LABELLINGS[0]!, FIRST_DAY, LAST_DAY);
      expect(bars.length).toBeGreaterThan(700);
      for (let i = 1; i < bars.length; i++) {
        const [a, b] = [bars[i - 1]!.startMs, bars[i]!.startMs];
        expect(barsMissingBetween(a, b, klineType, fx), `${iso(a)} → ${iso(b)}`).toBe(false);
      }
    }
  });
});

/** Every bar the simulator serves for local days [fromDay, toDay], in time order, by its trading minutes. */
function simBars(
  cal: SimCalendar,
  klineType: KlineType,
  labelling: SimLabelling,
  fromDay: number,
  toDay: number,
) {
  const bars = new Map<number, { startMs: number; tradesFromMs: number; endMs: number }>();
  for (let day = fromDay; day <= toDay; day++) {
    for (const [s, e] of sessionsOfDay(cal, day)) {
      // Daily and longer bars: one probe per session is enough; intraday: every minute (every hour
      // around the clock, where only hourly bars are asked for).
      const step = klineType >= 8 ? e - s : cal.segments.length === 0 ? HOUR_MS : 60_000;
      for (let t = s; t < e; t += step) {
        if (!isTradingAt(cal, t)) continue;
        const p = simBarPeriodAt(t, klineType, cal, labelling);
        if (p !== undefined) bars.set(p.startMs, p);
      }
    }
  }
  return [...bars.values()].sort((a, b) => a.startMs - b.startMs);
}
