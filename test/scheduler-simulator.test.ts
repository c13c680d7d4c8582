// The plan scheduler against the simulator's strict enforcement (sliding windows over arrival
// times, refused requests counted): a burst of mixed requests through the core client must
// produce zero refusals, and a "rate limit" answer must pause and then pace the scheduler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlanScheduler, QuoteflowClient, planLimits, type Priority } from '../packages/core/src/index.js';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { tokenLabel } from '../packages/simulator/src/internal.js';

const PREMIUM = 'scheduler-test-premium-token';
const BASIC = 'scheduler-test-basic-token';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [PREMIUM]: 'premium', [BASIC]: 'basic' }, seed: 7 });
});

afterAll(async () => {
  await sim.close();
});

describe('PlanScheduler against the simulator', () => {
  it('sends a ten-second burst of mixed premium requests with zero refusals', async () => {
    const scheduler = new PlanScheduler(planLimits('premium'));
    const client = new QuoteflowClient({ baseUrl: sim.url, token: PREMIUM, plan: 'premium', scheduler });
    const sinceMs = Date.now();
    const backfill: Priority = 'backfill';
    const stocks = ['AAPL.US', 'MSFT.US', '700.HK', '9988.HK', '600519.SH'];
    const crypto = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'];
    const calls: Promise<unknown>[] = [
      // History backfill from several sources…
      ...Array.from({ length: 48 }, (_, i) =>
        client.kline(
          { code: crypto[i % crypto.length]!, klineType: 1, count: 100 },
          { priority: backfill, sourceId: `history-${i % 4}` },
        ),
      ),
      // …while live polling goes on.
      ...Array.from({ length: 24 }, (_, i) =>
        client.depth([stocks[i % stocks.length]!], { sourceId: 'depth' }),
      ),
      ...Array.from({ length: 10 }, () => client.staticInfo(stocks, { sourceId: 'static' })),
      ...Array.from({ length: 5 }, () =>
        client.batchKline(
          stocks.map((code) => ({ code, klineType: 1 as const })),
          { sourceId: 'latest-bars' },
        ),
      ),
      client.suspensions('sse', { sourceId: 'suspensions' }),
    ];
    const results = await Promise.allSettled(calls);
    const failures = results.filter((r) => r.status === 'rejected');
    expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);

    const entries = sim.log.filter({ token: tokenLabel(PREMIUM, 'premium'), sinceMs });
    expect(entries.length).toBeGreaterThanOrEqual(calls.length);
    expect(entries.filter((e) => e.refusedBy !== undefined || e.ret === 429)).toEqual([]);
    const stats = scheduler.stats();
    expect(stats.rateLimitReports).toBe(0);
    expect(stats.queued).toEqual({ live: 0, backfill: 0 });
    await client.close();
    await scheduler.close();
  }, 60_000);

  it('pauses after a "rate limit" answer, recovers by itself, and is never refused', async () => {
    const scheduler = new PlanScheduler(planLimits('basic'), {
      rateLimitBackoffMs: 2_000,
      recoveryMs: 2_000,
    });
    const client = new QuoteflowClient({
      baseUrl: sim.url,
      token: BASIC,
      plan: 'basic',
      scheduler,
      retry: { baseDelayMs: 1, maxDelayMs: 1 },
    });
    const sinceMs = Date.now();
    sim.addFault({ kind: 'rate-limit', endpoint: 'kline', times: 1 });
    const calls = Array.from({ length: 5 }, (_, i) =>
      client.kline({ code: 'BTCUSDT', klineType: 1, count: 10 }, { priority: 'backfill', sourceId: `s${i}` }),
    );
    const results = await Promise.allSettled(calls);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const entries = sim.log.filter({ token: tokenLabel(BASIC, 'basic'), sinceMs });
    expect(entries.filter((e) => e.refusedBy !== undefined)).toEqual([]);
    const faulted = entries.findIndex((e) => e.faults.includes('rate-limit'));
    expect(faulted).toBeGreaterThanOrEqual(0);
    // Nothing arrives during the pause that began when the client reported the 429.
    const next = entries[faulted + 1]!;
    expect(next.arrivalMs - entries[faulted]!.arrivalMs).toBeGreaterThanOrEqual(2_000);
    // The recovery is paced at half the sustained rate (starts 2 × 1025 ms apart; arrivals jitter
    // by a few ms), clearly slower than the plan's one per 1025 ms.
    const recovery = entries.slice(faulted + 1, faulted + 3).map((e) => e.arrivalMs);
    expect(recovery.length).toBe(2);
    expect(recovery[1]! - recovery[0]!).toBeGreaterThanOrEqual(1_800);
    expect(scheduler.stats().rateLimitReports).toBe(1);
    await client.close();
    await scheduler.close();
  }, 60_000);
});
