import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PLANS, WINDOW_RULE_IDS, limitOverridesOf, planLimits, sustainedRate } from './plans.js';

describe('planLimits', () => {
  it('encodes the spec table for Free: one request every 10 s, 10 per minute, 1,000 per day', () => {
    const free = planLimits('free');
    expect(free.rules.find((r) => r.id === 'combined')).toMatchObject({ windowMs: 10_000, limit: 1 });
    expect(free.rules.find((r) => r.id === 'per-minute')).toMatchObject({ windowMs: 60_000, limit: 10 });
    expect(free.perDay).toBe(1_000);
    expect(free.batchKlineGroups).toBe(10);
    expect(free.codesPerRequest).toBe(5);
  });

  it.each([
    ['basic', 1, 3_000, 100],
    ['premium', 10, 2_000, 200],
    ['professional', 20, 1_000, 500],
    ['all-us', 20, 1_000, 500],
  ] as const)(
    'gives %s %d requests per second, a batch-kline interval of %d ms and %d groups',
    (plan, perSecond, interval, groups) => {
      const limits = planLimits(plan);
      expect(limits.rules.find((r) => r.id === 'combined')).toMatchObject({
        windowMs: 1_000,
        limit: perSecond,
      });
      expect(limits.rules.find((r) => r.id === 'batch-kline-interval')).toMatchObject({
        windowMs: interval,
        limit: 1,
      });
      expect(limits.batchKlineGroups).toBe(groups);
    },
  );

  it('limits suspension queries to one a minute on every plan', () => {
    for (const plan of PLANS) {
      expect(planLimits(plan).rules.find((r) => r.scope === 'suspension')).toMatchObject({
        windowMs: 60_000,
        limit: 1,
      });
    }
  });

  it('accepts a stricter batch group override and refuses a looser one, naming it', () => {
    expect(planLimits('free', { batchKlineGroups: 5 }).batchKlineGroups).toBe(5);
    expect(() => planLimits('free', { batchKlineGroups: 11 })).toThrow(/batchKlineGroups.*1 to 10/);
  });

  it('derives the sustained rate from the binding sliding-window rule', () => {
    expect(sustainedRate(planLimits('free'), 'kline')).toBeCloseTo(0.1);
    expect(sustainedRate(planLimits('premium'), 'batch-kline')).toBeCloseTo(0.5);
    expect(sustainedRate(planLimits('professional'), 'kline')).toBe(20);
  });
});

describe('planLimits overrides', () => {
  it('tighten a rule, the daily budget and the batch size, and round-trip through limitOverridesOf', () => {
    const limits = planLimits('basic', {
      rules: { 'per-minute': { limit: 30 }, 'kline-rate': { windowMs: 2_000 } },
      perDay: 50_000,
      batchKlineGroups: 5,
    });
    expect(limits.rules.find((r) => r.id === 'per-minute')).toMatchObject({ limit: 30, windowMs: 60_000 });
    expect(limits.rules.find((r) => r.id === 'kline-rate')).toMatchObject({ limit: 1, windowMs: 2_000 });
    expect(limits.perDay).toBe(50_000);
    expect(sustainedRate(limits, 'kline')).toBe(0.5);
    expect(planLimits('basic', limitOverridesOf(limits))).toEqual(limits);
  });

  it('refuse to loosen anything, naming the rule and the plan', () => {
    expect(() => planLimits('basic', { rules: { 'per-minute': { limit: 61 } } })).toThrow(
      /rule "per-minute": the limit must be an integer from 1 to 60 on plan basic \(an override may only tighten\), got 61/,
    );
    expect(() => planLimits('basic', { rules: { 'batch-kline-interval': { windowMs: 2_999 } } })).toThrow(
      /rule "batch-kline-interval": the window must be at least the plan's 3000 ms/,
    );
    expect(() => planLimits('free', { perDay: 1_001 })).toThrow(/"perDay" must be an integer from 1 to 1000/);
    expect(() => planLimits('free', { rules: { 'per-hour': { limit: 1 } } })).toThrow(
      /rule "per-hour": no such rule; the rules are combined, per-minute/,
    );
  });

  it('never yield a rule looser than the plan (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PLANS),
        fc.constantFrom(...WINDOW_RULE_IDS),
        fc.integer({ min: -5, max: 2_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        (plan, id, limit, windowMs) => {
          const base = planLimits(plan).rules.find((r) => r.id === id)!;
          let tightened;
          try {
            tightened = planLimits(plan, { rules: { [id]: { limit, windowMs } } }).rules.find(
              (r) => r.id === id,
            )!;
          } catch (err) {
            expect(err).toBeInstanceOf(RangeError);
            expect(limit < 1 || limit > base.limit || windowMs < base.windowMs).toBe(true);
            return;
          }
          expect(tightened.limit).toBeLessThanOrEqual(base.limit);
          expect(tightened.windowMs).toBeGreaterThanOrEqual(base.windowMs);
          expect(tightened.limit / tightened.windowMs).toBeLessThanOrEqual(base.limit / base.windowMs);
        },
      ),
    );
  });
});
