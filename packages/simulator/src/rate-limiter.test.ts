import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limiter.js';
import { simPlanLimits, type SimPlan } from './sim-plans.js';

const T0 = Date.parse('2026-11-17T10:00:00Z');
const limiter = (
  plan: SimPlan,
  opts: { countRefused?: boolean; dayTimeZone?: string } = {},
  perDay?: number,
) => new RateLimiter(simPlanLimits(plan, perDay === undefined ? {} : { perDay }), opts);

describe('RateLimiter', () => {
  it('Free: admits one request every 10 s across all endpoints, exactly at the 10 s boundary', () => {
    const l = limiter('free');
    expect(l.arrive('kline', T0)).toEqual({ allowed: true, rule: undefined });
    expect(l.arrive('depth-tick', T0 + 9_999)).toEqual({ allowed: false, rule: 'combined' });
    // The refused arrival at +9 999 counts (countRefused), so +10 000 is still inside its window.
    expect(l.arrive('depth-tick', T0 + 10_000)).toEqual({ allowed: false, rule: 'combined' });
    expect(l.arrive('depth-tick', T0 + 19_999)).toEqual({ allowed: false, rule: 'combined' });
    expect(l.arrive('depth-tick', T0 + 29_999)).toEqual({ allowed: true, rule: undefined });
  });

  it('admits the next request exactly one window later when refused arrivals do not count', () => {
    const l = limiter('free', { countRefused: false });
    expect(l.arrive('kline', T0).allowed).toBe(true);
    expect(l.arrive('kline', T0 + 9_999)).toEqual({ allowed: false, rule: 'combined' });
    expect(l.arrive('kline', T0 + 10_000).allowed).toBe(true);
  });

  it('Basic: one request in any 1 s window, whatever the endpoint', () => {
    const l = limiter('basic', { countRefused: false });
    expect(l.arrive('kline', T0).allowed).toBe(true);
    expect(l.arrive('static-info', T0 + 999)).toEqual({ allowed: false, rule: 'combined' });
    expect(l.arrive('static-info', T0 + 1_000).allowed).toBe(true);
  });

  it('Basic: 60 per minute, the 61st within 60 s refused by per-minute', () => {
    const l = limiter('basic', { countRefused: false });
    for (let i = 0; i < 60; i++)
      expect(l.arrive(i % 2 === 0 ? 'kline' : 'depth-tick', T0 + i * 1_000).allowed).toBe(true);
    // 60 s after the first arrival the window (t-60 s, t] no longer holds it.
    expect(l.arrive('kline', T0 + 60_000)).toEqual({ allowed: true, rule: undefined });
  });

  it('Premium: 10 per second combined, the 11th in the same second refused', () => {
    const l = limiter('premium', { countRefused: false });
    for (let i = 0; i < 10; i++)
      expect(l.arrive(i < 5 ? 'kline' : 'depth-tick', T0 + i * 10).allowed).toBe(true);
    expect(l.arrive('static-info', T0 + 999)).toEqual({ allowed: false, rule: 'combined' });
    expect(l.arrive('static-info', T0 + 1_000).allowed).toBe(true);
  });

  it('Professional: 20 per second per endpoint and combined; per-minute caps at 1200', () => {
    const l = limiter('professional', { countRefused: false });
    for (let i = 0; i < 20; i++) expect(l.arrive('kline', T0 + i).allowed).toBe(true);
    expect(l.arrive('kline', T0 + 500)).toEqual({ allowed: false, rule: 'combined' });
    const m = limiter('professional', { countRefused: false });
    // 20 per second for 60 s = 1200; then the minute is full even though the second is not.
    for (let s = 0; s < 60; s++)
      for (let i = 0; i < 20; i++)
        expect(m.arrive(i % 2 ? 'kline' : 'depth-tick', T0 + s * 1_000 + i).allowed).toBe(true);
    const r = m.arrive('static-info', T0 + 59_999);
    expect(r.allowed).toBe(false);
    expect(['combined', 'per-minute']).toContain(r.rule);
    const p = limiter('professional', { countRefused: false });
    for (let s = 0; s < 60; s++) for (let i = 0; i < 20; i++) p.arrive('kline', T0 + s * 1_000);
    expect(p.arrive('depth-tick', T0 + 59_500)).toEqual({ allowed: false, rule: 'combined' });
    expect(p.arrive('depth-tick', T0 + 60_000)).toEqual({ allowed: true, rule: undefined });
  });

  it('refuses by per-minute when the per-second rule has room but the minute has not', () => {
    // With the sliding combined rule, 600/min can never bind on its own on Premium (60 disjoint
    // seconds of 10); drop the combined rule to show the per-minute rule alone.
    const base = simPlanLimits('premium');
    const l = new RateLimiter(
      { ...base, rules: base.rules.filter((r) => r.id !== 'combined') },
      { countRefused: false },
    );
    for (let i = 0; i < 600; i++)
      expect(
        l.arrive(i % 2 === 0 ? 'kline' : 'depth-tick', T0 + Math.floor(i / 20) * 1_000 + (i % 20)).allowed,
      ).toBe(true);
    expect(l.arrive('static-info', T0 + 45_000)).toEqual({ allowed: false, rule: 'per-minute' });
    expect(l.arrive('static-info', T0 + 60_000)).toEqual({ allowed: true, rule: undefined });
  });

  it('applies each per-endpoint rate to its endpoint only', () => {
    // Premium: 10/s combined and 10/s per endpoint; shows the endpoint rule by filling it first.
    const l = new RateLimiter(
      {
        ...simPlanLimits('premium'),
        rules: simPlanLimits('premium').rules.filter((r) => r.id !== 'combined'),
      },
      { countRefused: false },
    );
    for (let i = 0; i < 10; i++) expect(l.arrive('kline', T0 + i).allowed).toBe(true);
    expect(l.arrive('kline', T0 + 100)).toEqual({ allowed: false, rule: 'kline-rate' });
    expect(l.arrive('depth-tick', T0 + 100).allowed).toBe(true);
    expect(l.arrive('static-info', T0 + 100).allowed).toBe(true);
  });

  it.each([
    ['free', 10_000],
    ['basic', 3_000],
    ['premium', 2_000],
    ['professional', 1_000],
    ['all-us', 1_000],
  ] as const)('%s: one /batch-kline every %i ms', (plan, intervalMs) => {
    const l = limiter(plan, { countRefused: false });
    expect(l.arrive('batch-kline', T0).allowed).toBe(true);
    const early = l.arrive('batch-kline', T0 + intervalMs - 1);
    expect(early.allowed).toBe(false);
    expect(l.arrive('batch-kline', T0 + intervalMs).allowed).toBe(true);
    if (plan === 'premium' || plan === 'professional') expect(early.rule).toBe('batch-kline-interval');
  });

  it('allows one suspension query per minute across the three exchanges', () => {
    const l = limiter('professional', { countRefused: false });
    expect(l.arrive('suspension', T0).allowed).toBe(true);
    expect(l.arrive('suspension', T0 + 59_999)).toEqual({ allowed: false, rule: 'suspension-interval' });
    expect(l.arrive('kline', T0 + 30_000).allowed).toBe(true);
    expect(l.arrive('suspension', T0 + 60_000).allowed).toBe(true);
  });

  it('refuses past the daily total until midnight of the configured zone', () => {
    const l = limiter('professional', { countRefused: false, dayTimeZone: 'Asia/Shanghai' }, 3);
    const evening = Date.parse('2026-11-17T15:00:00Z'); // 23:00 Shanghai
    for (let i = 0; i < 3; i++) expect(l.arrive('kline', evening + i * 1_000).allowed).toBe(true);
    expect(l.arrive('kline', evening + 3_600_000 - 1)).toEqual({ allowed: false, rule: 'per-day' });
    expect(l.arrive('kline', evening + 3_600_000)).toEqual({ allowed: true, rule: undefined }); // 00:00 Shanghai
  });

  it('Free allows 1000 per day and refuses the 1001st', () => {
    const l = limiter('free', { countRefused: false });
    const day = Date.parse('2026-11-17T00:00:00Z');
    for (let i = 0; i < 1_000; i++) expect(l.arrive('kline', day + i * 10_000).allowed).toBe(true);
    expect(l.arrive('kline', day + 1_000 * 10_000)).toEqual({ allowed: false, rule: 'per-day' });
    expect(l.arrive('kline', Date.parse('2026-11-18T00:00:00Z')).allowed).toBe(true);
  });
});
