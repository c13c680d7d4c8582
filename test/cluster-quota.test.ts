import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planLimits, type EndpointKind, type Plan } from '@quoteflow/core';
import { ClusterError, RedisQuota, SharedPlanScheduler, type RedisQuotaEvent } from '@quoteflow/cluster';
import { RateLimiter, simPlanLimits, type SimPlan } from '@quoteflow/simulator';
import { startRedisServer, testRedis, type TestRedis } from './support/redis-server.js';

// Starts are recorded in the test process(es) when `send` runs; on a busy machine that can lag the
// reservation by tens of ms, so the tests widen the margin (the gate's logic is what they check).
const MARGIN_MS = 100;

interface Start {
  readonly atMs: number;
  readonly endpoint: EndpointKind;
}

/**
 * Replays merged starts, in time order, through the simulator's rate limiter (an implementation
 * that shares no code with core or cluster) and returns the refusals.
 */
function violations(plan: SimPlan, starts: readonly Start[]): { atMs: number; rule: string | undefined }[] {
  const limiter = new RateLimiter(simPlanLimits(plan), { countRefused: false });
  const out: { atMs: number; rule: string | undefined }[] = [];
  for (const start of [...starts].sort((a, b) => a.atMs - b.atMs)) {
    const decision = limiter.arrive(start.endpoint, start.atMs);
    if (!decision.allowed) out.push({ atMs: start.atMs, rule: decision.rule });
  }
  return out;
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await testRedis();
});
afterAll(async () => {
  await redis?.close();
});

describe('shared quota in Redis', () => {
  it('keeps three schedulers of one token inside every window together', async () => {
    const token = `tok-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const schedulers = [1, 2, 3].map(
      () =>
        new SharedPlanScheduler({
          redis: redis.url,
          token,
          limits: planLimits('premium'),
          marginMs: MARGIN_MS,
          keyPrefix: prefix,
        }),
    );
    const starts: Start[] = [];
    const mix: EndpointKind[] = [
      'kline',
      'kline',
      'depth-tick',
      'kline',
      'batch-kline',
      'static-info',
      'kline',
      'kline',
      'depth-tick',
      'kline',
      'kline',
      'static-info',
      'kline',
      'kline',
    ];
    await Promise.all(
      schedulers.flatMap((scheduler, w) =>
        Array.from({ length: 14 }, (_, i) => {
          const endpoint = mix[(i + w) % mix.length]!;
          return scheduler.schedule(
            { endpoint, priority: 'backfill' },
            async () => void starts.push({ atMs: Date.now(), endpoint }),
          );
        }),
      ),
    );
    await Promise.all(schedulers.map((s) => s.close()));
    expect(starts.length).toBe(42);
    expect(violations('premium', starts)).toEqual([]);
    // A burst the plan allows (ten at once) did happen: the gate does not just serialise.
    const sorted = starts.map((s) => s.atMs).sort((a, b) => a - b);
    expect(sorted[9]! - sorted[0]!).toBeLessThan(500);
    // Three batch-kline requests at one per 2 s: the shared interval spaces them across workers.
    const batch = starts
      .filter((s) => s.endpoint === 'batch-kline')
      .map((s) => s.atMs)
      .sort((a, b) => a - b);
    for (let i = 1; i < batch.length; i++) expect(batch[i]! - batch[i - 1]!).toBeGreaterThanOrEqual(2_000);
  });

  it('keeps three worker processes of one token inside every window together', async () => {
    const token = `tok-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const worker = fileURLToPath(new URL('./support/redis-quota-worker.ts', import.meta.url));
    const run = (endpoints: string) =>
      new Promise<Start[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', worker], {
          env: {
            ...process.env,
            QF_TEST_REDIS_URL: redis.url,
            QF_TEST_TOKEN: token,
            QF_TEST_PLAN: 'basic' satisfies Plan,
            QF_TEST_MARGIN_MS: String(MARGIN_MS),
            QF_TEST_PREFIX: prefix,
            QF_TEST_ENDPOINTS: endpoints,
            QF_TEST_JOBS: '2',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (err += c.toString()));
        child.on('error', reject);
        child.on('exit', (code) => {
          if (code !== 0) reject(new Error(`worker exited ${code}: ${err}`));
          else
            resolve(
              out
                .trim()
                .split('\n')
                .filter(Boolean)
                .map((line) => JSON.parse(line) as Start),
            );
        });
      });
    const results = await Promise.all([run('kline'), run('kline,batch-kline'), run('depth-tick,kline')]);
    const starts = results.flat();
    expect(starts.length).toBe(6);
    expect(violations('basic', starts)).toEqual([]);
    // Basic allows one request per second across all interfaces: six starts span at least 5 s.
    const sorted = starts.map((s) => s.atMs).sort((a, b) => a - b);
    expect(sorted[5]! - sorted[0]!).toBeGreaterThanOrEqual(5 * 1_000);
  });

  it('starts nothing while Redis is down, holds after it lost its data, and resumes', async () => {
    const own = await startRedisServer(); // this test stops Redis, so it never uses REDIS_URL
    const events: RedisQuotaEvent[] = [];
    const holdMs = 1_500;
    const scheduler = new SharedPlanScheduler({
      redis: own.url,
      token: `tok-${randomUUID()}`,
      limits: planLimits('premium'),
      marginMs: MARGIN_MS,
      lostStateHoldMs: holdMs,
      commandTimeoutMs: 300,
      onEvent: (e) => events.push(e),
    });
    try {
      const starts: number[] = [];
      // A steady stream: one job every 100 ms for 5 s, each a kline request (10/s allowed).
      const jobs: Promise<void>[] = [];
      const feeder = setInterval(() => {
        jobs.push(
          scheduler.schedule(
            { endpoint: 'kline', priority: 'live' },
            async () => void starts.push(Date.now()),
          ),
        );
      }, 100);
      await sleep(1_000);
      const startsBeforeStop = starts.length;
      await own.stop();
      const stoppedAt = Date.now(); // Redis has exited: from here no reservation can succeed
      const downUntil = stoppedAt + 1_500;
      await sleep(1_500);
      await own.restart();
      const restartedAt = Date.now();
      await sleep(2_500);
      clearInterval(feeder);
      await Promise.all(jobs);
      expect(startsBeforeStop).toBeGreaterThan(5);
      // Nothing starts from the stop until the restart, and nothing within the hold after it.
      expect(starts.filter((t) => t > stoppedAt && t < downUntil)).toEqual([]);
      expect(starts.filter((t) => t > stoppedAt && t < restartedAt + holdMs - 100)).toEqual([]);
      // …and everything queued meanwhile started afterwards.
      expect(starts.filter((t) => t >= restartedAt + holdMs - 100).length).toBeGreaterThan(10);
      expect(events.map((e) => e.type)).toEqual(['redis-unavailable', 'redis-available', 'state-reset']);
      // The worker re-seeded its own starts of the day into the new generation.
      const probe = new Redis(own.url);
      const dayKeys = (await probe.keys('*:quota:day:*')) as string[];
      const dayCount = Number(await probe.get(dayKeys[0]!));
      await probe.quit();
      expect(dayCount).toBe(starts.length);
    } finally {
      await scheduler.close();
      await own.close();
    }
  });

  it('shares the daily total: once it is used up no worker starts, and the counter expires after the reset midnight', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const limits = { ...planLimits('professional'), perDay: 3 };
    const options = {
      redis: redis.url,
      token: 'tok-day',
      limits,
      keyPrefix: prefix,
      dailyResetTimeZone: 'UTC',
    };
    const a = new RedisQuota(options);
    const b = new RedisQuota(options);
    await a.reserve('kline');
    await b.reserve('depth-tick');
    await a.reserve('batch-kline');
    const controller = new AbortController();
    const waiting = [
      a.reserve('kline', { signal: controller.signal }),
      b.reserve('kline', { signal: controller.signal }),
    ];
    await sleep(500);
    expect(a.stats()).toMatchObject({ reserved: 2, waiting: 1 });
    expect(b.stats()).toMatchObject({ reserved: 1, waiting: 1 });
    const probe = new Redis(redis.url);
    const keys = (await probe.keys(`${prefix}:*:quota:day:*`)) as string[];
    expect(keys.length).toBe(1);
    expect(await probe.get(keys[0]!)).toBe('3');
    const now = Date.now();
    const midnight = Date.UTC(
      new Date(now).getUTCFullYear(),
      new Date(now).getUTCMonth(),
      new Date(now).getUTCDate() + 1,
    );
    const ttl = await probe.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(midnight - now + 55_000);
    expect(ttl).toBeLessThanOrEqual(midnight - now + 60_000);
    await probe.quit();
    controller.abort(new Error('enough'));
    for (const w of waiting) await expect(w).rejects.toThrow('enough');
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps the token out of every Redis key and value', async () => {
    const token = `secret-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const quota = new RedisQuota({
      redis: redis.url,
      token,
      limits: planLimits('premium'),
      keyPrefix: prefix,
    });
    await quota.reserve('kline');
    await quota.reserve('batch-kline', { priority: 'live' });
    await quota.close();
    const probe = new Redis(redis.url);
    const keys = (await probe.keys(`${prefix}:*`)) as string[];
    expect(keys.length).toBeGreaterThan(3);
    for (const key of keys) {
      expect(key).not.toContain(token);
      const type = await probe.type(key);
      const dump =
        type === 'zset' ? await probe.zrange(key, '0', '-1') : type === 'string' ? [await probe.get(key)] : [];
      for (const value of dump) expect(value).not.toContain(token);
    }
    await probe.quit();
  });

  it('rejects a waiting reservation on close and on abort, and refuses bad options naming them', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const quota = new RedisQuota({
      redis: redis.url,
      token: 'tok-close',
      limits: planLimits('free'),
      keyPrefix: prefix,
    });
    await quota.reserve('kline'); // Free: the next one waits 10 s
    const controller = new AbortController();
    const aborted = quota.reserve('kline', { signal: controller.signal });
    const waiting = quota.reserve('kline');
    controller.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    void quota.close();
    await expect(waiting).rejects.toMatchObject({ code: 'QF_CLUSTER_CLOSED' });
    expect(() => new RedisQuota({ redis: 'http://nope', token: 't', limits: planLimits('free') })).toThrow(
      ClusterError,
    );
    expect(
      () => new RedisQuota({ redis: redis.url, token: 't', limits: planLimits('free'), marginMs: -1 }),
    ).toThrow(/"marginMs"/);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
