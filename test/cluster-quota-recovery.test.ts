import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { planLimits } from '@quoteflow/core';
import { RedisWindowStore, type RedisQuotaEvent, type RedisWindowStoreOptions } from '@quoteflow/cluster';
import { StoreClient } from './support/redis-store-client.js';
import { startRedisServer, type TestRedis } from './support/redis-server.js';

// Each test stops and restarts its own Redis without persistence: it comes back empty.

const GRACE_MS = 1_000;

function quotaOn(redis: TestRedis, token: string, extra: Partial<RedisWindowStoreOptions> = {}) {
  const events: RedisQuotaEvent[] = [];
  const options = {
    redis: redis.url,
    token,
    limits: planLimits('premium'), // 10 requests/s, 600/min
    lostStateHoldMs: 20_000,
    recoveryGraceMs: GRACE_MS,
    watchIntervalMs: 200,
    commandTimeoutMs: 300,
    onEvent: (e: RedisQuotaEvent) => events.push(e),
    ...extra,
  };
  const quota = new StoreClient(new RedisWindowStore(options), options.limits, options);
  return { quota, events };
}

/** Makes `n` requests through `quota` (each settled at once); resolves with their local start times. */
async function requests(quota: StoreClient, n: number): Promise<number[]> {
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    const ticket = await quota.acquire('kline');
    starts.push(Date.now());
    await quota.settle(ticket);
  }
  return starts;
}

/** Entries of the per-minute rule (the sorted set holding the most entries) and the day's counter. */
async function sharedCounts(url: string): Promise<{ minute: number; day: number }> {
  const probe = new Redis(url);
  try {
    let minute = 0;
    for (const key of (await probe.keys('*:quota:rule:*')) as string[])
      minute = Math.max(minute, await probe.zcard(key));
    const dayKeys = ((await probe.keys('*:quota:day:*')) as string[]).filter((k) => !k.endsWith(':base'));
    const day = dayKeys.length === 0 ? 0 : Number(await probe.get(dayKeys[0]!));
    return { minute, day };
  } finally {
    probe.disconnect();
  }
}

/** Stops Redis, keeps it away for `downMs`, starts it again (empty); returns when it answers. */
async function loseRedisData(redis: TestRedis, downMs: number): Promise<number> {
  await redis.stop();
  await sleep(downMs);
  await redis.restart();
  return Date.now();
}

describe('shared quota after Redis lost its data', () => {
  it('ends the hold after the grace once every active participant re-seeded, idle ones included', async () => {
    const redis = await startRedisServer();
    const token = `tok-${randomUUID()}`;
    const busy = quotaOn(redis, token);
    const idle = quotaOn(redis, token);
    try {
      const before = [...(await requests(busy.quota, 25)), ...(await requests(idle.quota, 5))];
      await sleep(600); // both watches see both participants active
      const restartedAt = await loseRedisData(redis, 500);
      const [first] = await requests(busy.quota, 1);
      const counts = await sharedCounts(redis.url);
      // Not before the grace, and far sooner than the 20 s hold.
      expect(first! - restartedAt).toBeGreaterThanOrEqual(GRACE_MS - 300);
      expect(first! - restartedAt).toBeLessThan(GRACE_MS + 3_000);
      // Both re-seeded: the minute window and the day hold every start made before the loss.
      expect(counts.minute).toBeGreaterThanOrEqual(before.length + 1);
      expect(counts.day).toBeGreaterThanOrEqual(before.length + 1);
      expect(busy.events.map((e) => e.type)).toContain('state-reset');
      expect(idle.events.map((e) => e.type)).toContain('state-reset');
    } finally {
      await busy.quota.store.close();
      await idle.quota.store.close();
      await redis.close();
    }
  });

  it('holds for the whole window when a participant active lately died with the data', async () => {
    const redis = await startRedisServer();
    const token = `tok-${randomUUID()}`;
    const holdMs = 5_000;
    const survivor = quotaOn(redis, token, { lostStateHoldMs: holdMs });
    const doomed = quotaOn(redis, token, { lostStateHoldMs: holdMs });
    try {
      await requests(survivor.quota, 3);
      await requests(doomed.quota, 5);
      await doomed.quota.store.close(); // gone: it can re-seed nothing
      await sleep(600); // the survivor's watch saw it active
      const restartedAt = await loseRedisData(redis, 300);
      const [first] = await requests(survivor.quota, 1);
      // Nobody knows what the dead one sent: only the full hold makes its starts harmless.
      expect(first! - restartedAt).toBeGreaterThanOrEqual(holdMs - 100);
      expect(first! - restartedAt).toBeLessThan(holdMs + 3_000);
    } finally {
      await survivor.quota.store.close();
      await doomed.quota.store.close();
      await redis.close();
    }
  });

  it('holds for the whole window when a newcomer made its first starts and died just before the loss', async () => {
    const redis = await startRedisServer();
    const token = `tok-${randomUUID()}`;
    const holdMs = 5_000;
    // One watch a second: without the newcomer waiting to be seen, its starts and the loss would
    // mostly fall between two of the survivor's watches, and the hold would end after the grace.
    const options = { lostStateHoldMs: holdMs, watchIntervalMs: 1_000 };
    const survivor = quotaOn(redis, token, options);
    const newcomer = quotaOn(redis, token, options);
    try {
      await requests(survivor.quota, 3);
      await sleep(1_200); // the survivor watches
      const askedAt = Date.now();
      await requests(newcomer.quota, 3);
      const firstStartAfterMs = Date.now() - askedAt;
      await newcomer.quota.store.close(); // dies with what it sent
      const restartedAt = await loseRedisData(redis, 200);
      const [first] = await requests(survivor.quota, 1);
      // The newcomer's first start waited for the survivor's next watch (at most a watch period)…
      expect(firstStartAfterMs).toBeLessThan(3_000);
      // …so the survivor expects it to re-seed; it never does, and the full hold applies.
      expect(first! - restartedAt).toBeGreaterThanOrEqual(holdMs - 300);
    } finally {
      await survivor.quota.store.close();
      await newcomer.quota.store.close();
      await redis.close();
    }
  });

  it('makes a newcomer that opens the new generation wait for the old participants to re-seed', async () => {
    const redis = await startRedisServer();
    const token = `tok-${randomUUID()}`;
    const old = quotaOn(redis, token);
    let newcomer: ReturnType<typeof quotaOn> | undefined;
    try {
      const before = await requests(old.quota, 20);
      await sleep(300);
      const restartedAt = await loseRedisData(redis, 300);
      // The newcomer knows of no generation, so it cannot tell a loss from a first use; Redis
      // started lately, so it gets the grace in which the old participant re-seeds.
      newcomer = quotaOn(redis, token);
      const [first] = await requests(newcomer.quota, 1);
      const counts = await sharedCounts(redis.url);
      expect(first! - restartedAt).toBeGreaterThanOrEqual(GRACE_MS - 300);
      expect(counts.minute).toBeGreaterThanOrEqual(before.length + 1);
      expect(counts.day).toBeGreaterThanOrEqual(before.length + 1);
    } finally {
      await old.quota.store.close();
      await newcomer?.quota.store.close();
      await redis.close();
    }
  });

  it('keeps a used-up daily total used up: the day and the rolling 24 hours are re-seeded', async () => {
    const redis = await startRedisServer();
    const limits = { ...planLimits('premium'), perDay: 3 };
    const a = quotaOn(redis, `tok-${randomUUID()}`, { limits, lostStateHoldMs: 2_000 });
    const controller = new AbortController();
    try {
      await requests(a.quota, 3);
      let granted = false;
      const fourth = a.quota.acquire('kline', controller.signal).then(() => (granted = true));
      await sleep(600); // a watch read the counters
      await loseRedisData(redis, 300);
      await sleep(3_500); // past the hold: only the re-seeded counters can keep the fourth waiting
      expect(granted).toBe(false);
      expect(a.quota.store.stats()).toMatchObject({ acquired: 3 });
      const probe = new Redis(redis.url);
      const rolling = await probe.hget((await probe.keys('*:quota:rolling-day:n'))[0]!, 'total');
      const day = ((await probe.keys('*:quota:day:*')) as string[]).filter((k) => !k.endsWith(':base'));
      expect(Number(rolling)).toBeGreaterThanOrEqual(3);
      expect(Number(await probe.get(day[0]!))).toBeGreaterThanOrEqual(3);
      probe.disconnect();
      controller.abort(new Error('enough'));
      await expect(fourth).rejects.toThrow('enough');
    } finally {
      controller.abort(new Error('enough'));
      await a.quota.store.close();
      await redis.close();
    }
  });

  it('counts the daily total as any 24 hours with dailyWindow rolling: one counter per minute slot, no calendar day', async () => {
    const redis = await startRedisServer();
    const limits = { ...planLimits('premium'), perDay: 2 };
    const token = `tok-${randomUUID()}`;
    const rollingOnly = quotaOn(redis, token, { limits, dailyWindow: 'rolling', keyPrefix: 'r' });
    const controller = new AbortController();
    try {
      await requests(rollingOnly.quota, 2);
      let granted = false;
      const third = rollingOnly.quota.acquire('kline', controller.signal).then(() => (granted = true));
      await sleep(300);
      expect(granted).toBe(false);
      expect(rollingOnly.quota.store.stats()).toMatchObject({ acquired: 2 });
      const probe = new Redis(redis.url);
      expect(await probe.keys('r:*:quota:day:*')).toEqual([]);
      const counts = await probe.hgetall((await probe.keys('r:*:quota:rolling-day:n'))[0]!);
      probe.disconnect();
      // One minute slot (ending after the starts) holds both.
      expect(counts['total']).toBe('2');
      const slots = Object.keys(counts).filter((k) => k !== 'total');
      expect(slots).toHaveLength(1);
      expect(Number(slots[0]) % 60_000).toBe(0);
      expect(Number(slots[0])).toBeGreaterThanOrEqual(Date.now() - 1_000);
      controller.abort(new Error('enough'));
      await expect(third).rejects.toThrow('enough');
    } finally {
      controller.abort(new Error('enough'));
      await rollingOnly.quota.store.close();
      await redis.close();
    }
  });

  it('opens without hold for a newcomer when Redis has been up longer than the longest window', async () => {
    const redis = await startRedisServer();
    try {
      // A short hold (the longest window) makes "up longer than it" true after a short wait.
      await sleep(2_100);
      const fresh = quotaOn(redis, `tok-${randomUUID()}`, { lostStateHoldMs: 500 });
      const askedAt = Date.now();
      const [first] = await requests(fresh.quota, 1);
      await fresh.quota.store.close();
      expect(first! - askedAt).toBeLessThan(GRACE_MS - 200);
    } finally {
      await redis.close();
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
