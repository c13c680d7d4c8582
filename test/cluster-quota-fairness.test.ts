import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { planLimits, systemClock, type Clock, type PlanLimits } from '@quoteflow/core';
import { RedisWindowStore, SharedPlanScheduler } from '@quoteflow/cluster';
import { StoreClient } from './support/redis-store-client.js';
import { testRedis, type TestRedis } from './support/redis-server.js';

/**
 * Fair sharing of the token's windows among workers, against a real Redis. Each worker keeps one
 * request of one endpoint always waiting (saturation), one of them always asks later than the
 * others (its timers fire `lateMs` after they are due, like a worker on a slower event loop or
 * with a slower round trip to Redis). Before the waiting list, the shared quota gave a free slot
 * to whoever asked first, so that worker got nothing; now every worker gets a grant within a
 * bounded number of grants to the others. Assertions are on the order of grants, never on durations.
 */

/** The premium plan with its /batch-kline rule at one per `windowMs`: many turns in a few seconds. */
function onePer(windowMs: number): PlanLimits {
  const premium = planLimits('premium');
  return {
    ...premium,
    rules: premium.rules.map((rule) =>
      rule.scope === 'batch-kline' ? { ...rule, windowMs, limit: 1 } : rule,
    ),
  };
}

/** The system clock whose timers fire `lateMs` after they are due. */
function lateClock(lateMs: number): Clock {
  return {
    now: () => systemClock.now(),
    setTimeout: (callback, delayMs) => systemClock.setTimeout(callback, delayMs + lateMs),
    clearTimeout: (handle) => systemClock.clearTimeout(handle),
  };
}

/** For each worker, the most grants to others before its first or between two of its own. */
export function longestWaits(order: readonly number[], workers: number): number[] {
  const longest = Array.from({ length: workers }, () => 0);
  const since = Array.from({ length: workers }, () => 0);
  for (const w of order)
    for (let other = 0; other < workers; other++) {
      if (other === w) since[other] = 0;
      else longest[other] = Math.max(longest[other]!, ++since[other]!);
    }
  return since.map((s, w) => Math.max(longest[w]!, s));
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await testRedis();
});
afterAll(async () => {
  await redis?.close();
});

describe('fair sharing of the shared quota', () => {
  it('serves workers that all saturate one endpoint in turns, also the one that always asks late', async () => {
    const token = `tok-${randomUUID()}`;
    const keyPrefix = `t${randomUUID().slice(0, 8)}`;
    const limits = onePer(100);
    const lateness = [0, 0, 30]; // ms; the third worker's retries always come later than the others'
    const schedulers = lateness.map(
      (lateMs) =>
        new SharedPlanScheduler({
          redis: redis.url,
          token,
          limits,
          keyPrefix,
          local: { clock: lateClock(lateMs) },
        }),
    );
    const order: number[] = [];
    const total = 45;
    try {
      // Each worker connected and joined first (a start of its own each): what is measured is the
      // turns of workers that all ask, not which one finished starting first on a loaded machine.
      await Promise.all(
        schedulers.map((scheduler) =>
          scheduler.schedule({ endpoint: 'batch-kline', priority: 'live' }, () => Promise.resolve()),
        ),
      );
      await Promise.all(
        schedulers.map(async (scheduler, w) => {
          while (order.length < total)
            await scheduler.schedule({ endpoint: 'batch-kline', priority: 'live' }, async () => {
              order.push(w);
            });
        }),
      );
    } finally {
      await Promise.all(schedulers.map((s) => s.close()));
    }
    console.log(`grant order: ${order.join('')}`);
    const counts = [0, 1, 2].map((w) => order.filter((x) => x === w).length);
    // Each worker, the late one too, is served about a third of the time…
    for (const c of counts) expect(c, order.join('')).toBeGreaterThanOrEqual(Math.floor(total / 3) - 3);
    // …and never waits while the others are served more than twice each.
    for (const wait of longestWaits(order, 3)) expect(wait, order.join('')).toBeLessThanOrEqual(4);
  }, 60_000);

  it('lets a waiter that never comes back hold the start until its grace ran out, then serves the next', async () => {
    const options = {
      redis: redis.url,
      token: `tok-${randomUUID()}`,
      limits: onePer(300),
      keyPrefix: `t${randomUUID().slice(0, 8)}`,
      queueGraceMs: 200,
    };
    const [a, gone, next] = [1, 2, 3].map(
      () => new StoreClient(new RedisWindowStore(options), options.limits),
    ) as [StoreClient, StoreClient, StoreClient];
    const probe = new Redis(redis.url);
    try {
      const first = await a.acquire('batch-kline');
      const [epochKey] = (await probe.keys(`${options.keyPrefix}:*:quota:epoch`)) as [string];
      const tickets = epochKey.replace(/epoch$/, 'tickets');
      const waitersKey = epochKey.replace(/epoch$/, 'waiters');
      // Refused while the first start is in flight (once the others saw it join): it is on the
      // waiting list, told when to come back…
      await vi.waitFor(
        async () => {
          expect(await gone.tryOnce('batch-kline')).toBeUndefined();
          expect(await probe.hlen(tickets)).toBe(1);
        },
        { timeout: 10_000, interval: 50 },
      );
      const [goneWaiter, goneTicket] = Object.entries(await probe.hgetall(tickets))[0]!;
      const due = Number(await probe.zscore(waitersKey, goneWaiter));
      await a.settle(first);
      // …and never comes back (a worker killed, or one that no longer wants it): the next asks at
      // once, and is served only once the gone waiter's deadline has passed, on the Redis clock.
      const second = await next.acquire('batch-kline');
      expect(second.serverMs).toBeGreaterThan(due);
      expect(await probe.hget(tickets, goneWaiter)).toBeNull();
      await next.settle(second);
      // Back after all, it waits again, with a new ticket behind every earlier one.
      expect(await gone.tryOnce('batch-kline')).toBeUndefined();
      expect(Number(await probe.hget(tickets, goneWaiter))).toBeGreaterThan(Number(goneTicket));
    } finally {
      await probe.quit();
      await Promise.all([a, gone, next].map((c) => c.store.close()));
    }
  });
});
