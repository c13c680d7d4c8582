import { describe, expect, it } from 'vitest';
import { PLANS, planLimits, sustainedRate } from './plans.js';

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
