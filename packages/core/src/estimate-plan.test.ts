import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KlineType } from './domain.js';
import { PLANS, planLimits } from './plans.js';
import { backfillRequestsFor, estimatePlan, minDurationMs, smallestFittingPlan } from './estimate-plan.js';
import { formatDuration } from './format-duration.js';

describe('backfillRequestsFor', () => {
  it('asks one page for a stock, whatever the bar count, because stocks cannot page backwards', () => {
    expect(backfillRequestsFor('AAPL.US', 100)).toBe(1);
    expect(backfillRequestsFor('700.HK', 5_000)).toBe(1);
  });

  it('pages a crypto series by 500 bars, counting the forming bar on the first page', () => {
    expect(backfillRequestsFor('BTCUSDT', 499)).toBe(1);
    expect(backfillRequestsFor('BTCUSDT', 500)).toBe(2);
    expect(backfillRequestsFor('EURGBP', 2_000)).toBe(5);
    expect(backfillRequestsFor('BTCUSDT', 0)).toBe(0);
  });
});

describe('minDurationMs', () => {
  it('lets a burst of the per-second limit leave at once, then one second per burst', () => {
    const pro = planLimits('professional');
    expect(minDurationMs(pro, 'kline', 20)).toBe(0);
    expect(minDurationMs(pro, 'kline', 21)).toBe(1_000);
    expect(minDurationMs(pro, 'kline', 1_200)).toBe(59_000);
  });

  it('spaces Free requests ten seconds apart and adds a day per exhausted daily budget', () => {
    const free = planLimits('free');
    expect(minDurationMs(free, 'kline', 7)).toBe(60_000);
    expect(minDurationMs(free, 'kline', 1_001)).toBeGreaterThanOrEqual(86_400_000);
  });

  it('is never faster than the sustained rate of the binding rule allows (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PLANS), fc.integer({ min: 1, max: 100_000 }), (plan, n) => {
        const limits = planLimits(plan);
        const d = minDurationMs(limits, 'kline', n);
        for (const rule of limits.rules.filter((r) => r.scope === 'all' || r.scope === 'kline')) {
          // Within any window of the rule, at most `limit` requests: n requests need (n/limit - 1) windows.
          expect(d).toBeGreaterThanOrEqual((Math.ceil(n / rule.limit) - 1) * rule.windowMs);
        }
      }),
    );
  });
});

describe('estimatePlan', () => {
  const universe = {
    codes: ['AAPL.US', '700.HK', 'BTCUSDT'],
    klineTypes: [1, 8] as KlineType[],
    bars: 1_000,
  };

  it('counts series, packs groups to the cap and refreshes at the batch interval plus margin and round trip', () => {
    const e = estimatePlan('professional', universe);
    expect(e.series).toBe(6);
    expect(e.live.batchRequestsPerCycle).toBe(1);
    // The scheduler counts a request until it settles: 1 s interval + 25 ms margin + 100 ms round trip.
    expect(e.live.refreshPeriodMs).toBe(1_125);
    expect(
      estimatePlan('professional', universe, {}, { marginMs: 0, roundTripMs: 0 }).live.refreshPeriodMs,
    ).toBe(1_000);
    // 2 stocks × 2 types one page each, BTCUSDT 3 pages × 2 types.
    expect(e.backfill.requests).toBe(4 + 6);
    expect(e.backfill.shortSeries).toBe(4);
    expect(e.fits).toBe(true);
  });

  it('slows Free polling to the daily budget and says a 1-minute series would skip bars', () => {
    const e = estimatePlan('free', { codes: ['BTCUSDT'], klineTypes: [1], bars: 10 });
    expect(e.live.refreshPeriodMs).toBe(86_400_000 / 1_000);
    expect(e.live.requestsPerDay).toBeLessThanOrEqual(1_000);
    expect(e.fits).toBe(false);
    expect(e.reasons.join()).toMatch(/skipped/);
  });

  it('needs several batch requests per cycle when the groups exceed the cap', () => {
    const codes = Array.from({ length: 10_000 }, (_, i) => `S${i}.US`);
    const e = estimatePlan('professional', { codes, klineTypes: [1], bars: 100 });
    expect(e.live.batchRequestsPerCycle).toBe(20);
    expect(e.live.refreshPeriodMs).toBe(20 * 1_125);
    expect(e.dailyShare).toBeCloseTo((86_400 / 22.5 / 1_728_000) * 20, 5);
  });

  it('shares the combined budget between depth and batch polling', () => {
    const depthCodes = Array.from({ length: 200 }, (_, i) => `D${i}.US`);
    const e = estimatePlan('basic', { codes: ['AAPL.US'], klineTypes: [1], bars: 10, depthCodes });
    // basic: 1 request per second in total; batch wants 1/3 s, depth 4 per poll at 1/s → scaled.
    const perSecond =
      1 / (e.live.refreshPeriodMs / 1000) +
      e.live.depthRequestsPerPoll / ((e.live.depthPeriodMs ?? 1) / 1000);
    expect(perSecond).toBeLessThanOrEqual(1.0001);
    expect(e.live.depthRequestsPerPoll).toBe(4);
  });

  it('never plans more live requests than the day or the combined rule allows (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PLANS),
        fc.integer({ min: 1, max: 3_000 }),
        fc.subarray([1, 2, 5, 8] as KlineType[], { minLength: 1 }),
        fc.integer({ min: 0, max: 500 }),
        (plan, nCodes, klineTypes, nDepth) => {
          const codes = Array.from({ length: nCodes }, (_, i) => `C${i}.HK`);
          const depthCodes = Array.from({ length: nDepth }, (_, i) => `D${i}.HK`);
          const e = estimatePlan(plan, { codes, klineTypes, bars: 10, depthCodes });
          const limits = planLimits(plan);
          // Polling every series at every cycle may exceed the day; close-aware polling may not.
          expect(e.live.requestsPerDayByCalendar).toBeLessThanOrEqual(limits.perDay * 1.0001);
          expect(e.live.requestsPerDayByCalendar).toBeLessThanOrEqual(e.live.requestsPerDay);
          // Polling everything at its own period fits the day too.
          const depthPerDay =
            e.live.depthPeriodMs === undefined
              ? 0
              : (e.live.depthRequestsPerPoll * 86_400_000) / e.live.depthPeriodMs;
          const allPerDay = (e.live.batchRequestsPerCycle * 86_400_000) / e.live.refreshPeriodPollingAllMs;
          expect(allPerDay + depthPerDay).toBeLessThanOrEqual(limits.perDay * 1.0001);
          expect(e.live.refreshPeriodPollingAllMs).toBeGreaterThanOrEqual(e.live.refreshPeriodMs);
          const batchInterval = limits.rules.find((r) => r.id === 'batch-kline-interval')!.windowMs;
          expect(e.live.refreshPeriodMs).toBeGreaterThanOrEqual(e.live.batchRequestsPerCycle * batchInterval);
        },
      ),
    );
  });
});

describe('smallestFittingPlan', () => {
  it('picks basic for one 1-minute series, which Free cannot refresh every minute all day', () => {
    expect(smallestFittingPlan({ codes: ['BTCUSDT'], klineTypes: [1], bars: 10 })).toBe('basic');
  });

  it('picks free for a few daily series', () => {
    expect(smallestFittingPlan({ codes: ['AAPL.US', 'BTCUSDT'], klineTypes: [8], bars: 10 })).toBe('free');
  });

  it('finds no plan when even professional refreshes slower than the bars', () => {
    const codes = Array.from({ length: 40_000 }, (_, i) => `S${i}.US`);
    expect(smallestFittingPlan({ codes, klineTypes: [1], bars: 1 })).toBeUndefined();
  });
});

describe('estimatePlan by market (close-aware polling)', () => {
  it('refreshes New York and Hong Kong, which never trade at once, each at the pace of its own series', () => {
    const codes = [
      ...Array.from({ length: 1_000 }, (_, i) => `S${i}.US`),
      ...Array.from({ length: 1_000 }, (_, i) => `${10_000 + i}.HK`),
      'BTCUSDT',
    ];
    const e = estimatePlan('professional', { codes, klineTypes: [1], bars: 0 });
    const by = new Map(e.live.markets.map((m) => [m.market, m]));
    expect([...by.keys()]).toEqual(['US', 'HK', 'crypto']);
    expect(by.get('US')!.series).toBe(1_000);
    // 6.5 h a day and a minute before each open, five days: 19.3% of the week; crypto always.
    expect(by.get('US')!.tradingShare).toBeCloseTo((5 * (6.5 * 60 + 1)) / (7 * 24 * 60), 2);
    expect(by.get('crypto')!.tradingShare).toBe(1);
    // Polling everything: 2,001 groups = 5 requests a cycle; while New York trades only its 1,000
    // and the crypto code: 3 requests.
    expect(e.live.batchRequestsPerCycle).toBe(5);
    expect(by.get('US')!.refreshWhileTradingMs).toBe(Math.ceil((3 * e.live.refreshPeriodMs) / 5));
    expect(by.get('HK')!.refreshWhileTradingMs).toBe(Math.ceil((3 * e.live.refreshPeriodMs) / 5));
  });
});

describe('estimatePlan by the calendar (requests per day with closed markets skipped)', () => {
  it('fits one New York 1-minute series into Free by polling it only while New York trades', () => {
    const universe = { codes: ['AAPL.US'], klineTypes: [1] as KlineType[], bars: 10 };
    const e = estimatePlan('free', universe);
    // By hand: New York may trade 09:29-16:00 (a bar labelled at the open may come a minute
    // early), counted in the 5-minute steps it touches: 14:25 to 21:00 UTC, 79 steps, 23,700 s.
    // Any 24 hours of a week without a holiday hold at most one session. Free allows 1,000
    // requests a day, one a cycle: a cycle every 23.7 s while it trades, within the 1-minute bars.
    expect(e.live.refreshPeriodMs).toBe(23_700);
    expect(e.live.requestsPerDayByCalendar).toBe(1_000);
    // Polling it all day at that period: 86,400 s / 23.7 s = 3,645.6 requests.
    expect(e.live.requestsPerDay).toBe(3_646);
    expect(e.live.requestsSavedPerDay).toBe(2_646);
    expect(e.dailyShareByCalendar).toBe(1);
    expect(e.dailyShare).toBeCloseTo(3.646, 3);
    // Polling it all day instead, 1,000 requests last only at one per 86.4 s.
    expect(e.live.refreshPeriodPollingAllMs).toBe(86_400);
    expect(e.fits).toBe(true);
    expect(smallestFittingPlan(universe)).toBe('free');
    // A code that trades around the clock gets no such help: 86.4 s, too slow for 1-minute bars.
    expect(estimatePlan('free', { ...universe, codes: ['BTCUSDT'] }).fits).toBe(false);
  });

  it('skips the closed market in each cycle and counts what that saves on the busiest day', () => {
    const codes = [...Array.from({ length: 100 }, (_, i) => `S${i}.US`), 'BTCUSDT'];
    const e = estimatePlan('basic', { codes, klineTypes: [1], bars: 0 });
    // By hand: 101 groups at basic's 100 a request = 2 requests a cycle; a cycle every
    // 2 × (3 s interval + 25 ms margin + 100 ms round trip) = 6.25 s, 13,824 cycles a day.
    expect(e.live.batchRequestsPerCycle).toBe(2);
    expect(e.live.refreshPeriodMs).toBe(6_250);
    expect(e.live.requestsPerDay).toBe(13_824 * 2);
    // By the calendar: in 79 five-minute steps of the day (New York's, as above) both requests,
    // in the other 209 only BTCUSDT's; 48 cycles a step: (79 × 2 + 209) × 48.
    expect(e.live.requestsPerDayByCalendar).toBe((79 * 2 + 209) * 48);
    expect(e.live.requestsSavedPerDay).toBe(209 * 48);
    // Far within basic's 86,400 a day either way: the same period polling everything.
    expect(e.live.refreshPeriodPollingAllMs).toBe(6_250);
    expect(e.dailyShareByCalendar).toBeCloseTo(17_616 / 86_400, 6);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [1_500, '1.5s'],
    [59_000, '59s'],
    [90_061_000, '1d 1h 1m 1s'],
  ])('formats %d ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});
