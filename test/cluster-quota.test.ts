import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock, planLimits, type EndpointKind, type Plan } from '@quoteflow/core';
import { PlanWindows } from '@quoteflow/core/internal';
import {
  ClusterError,
  REDIS_WINDOW_STORE_DEFAULTS,
  RedisWindowStore,
  SharedPlanScheduler,
  type RedisQuotaEvent,
  type RedisStartTicket,
} from '@quoteflow/cluster';
import { arrivalBoundBreaches, type TimedRequest } from './support/redis-arrival-check.js';
import { StoreClient } from './support/redis-store-client.js';
import { startSimulator } from '@quoteflow/simulator';
import { startRedisServer, testRedis, type TestRedis } from './support/redis-server.js';

/** A request's answer takes 0-150 ms (a fixed pseudo-random sequence): arrivals may be late. */
function latencies(seed: number): () => number {
  return () => (seed = (seed * 16807) % 2147483647) % 151;
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
          keyPrefix: prefix,
        }),
    );
    const latency = latencies(7);
    const requests: TimedRequest[] = [];
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
          return scheduler.schedule({ endpoint, priority: 'backfill' }, async () => {
            const startMs = Date.now();
            await sleep(latency());
            requests.push({ startMs, settleMs: Date.now(), endpoint });
          });
        }),
      ),
    );
    await Promise.all(schedulers.map((s) => s.close()));
    expect(requests.length).toBe(42);
    // Every earlier request arriving as late as its answer, this one as early as it left: no refusal.
    expect(arrivalBoundBreaches('premium', requests)).toEqual([]);
    // A burst the plan allows (ten at once) did happen: the gate does not just serialise, requests
    // were in flight together (a serialising gate never has two at once; measured as overlap, not
    // as a time bound, which a loaded machine stretches).
    const inFlightAt = (t: number) => requests.filter((r) => r.startMs <= t && t < r.settleMs).length;
    expect(Math.max(...requests.map((r) => inFlightAt(r.startMs)))).toBeGreaterThanOrEqual(2);
    // Three batch-kline requests at one per 2 s: the shared interval spaces them across workers,
    // from the settle of one to the start of the next.
    const batch = requests.filter((s) => s.endpoint === 'batch-kline').sort((a, b) => a.startMs - b.startMs);
    for (let i = 1; i < batch.length; i++)
      expect(batch[i]!.startMs - batch[i - 1]!.settleMs).toBeGreaterThanOrEqual(2_000);
  });

  it('keeps three worker processes of one token inside every window together', async () => {
    const token = `tok-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const run = (endpoints: string) =>
      runWorker({
        QF_TEST_TOKEN: token,
        QF_TEST_PLAN: 'basic' satisfies Plan,
        QF_TEST_PREFIX: prefix,
        QF_TEST_ENDPOINTS: endpoints,
        QF_TEST_JOBS: '2',
      });
    const results = await Promise.all([run('kline'), run('kline,batch-kline'), run('depth-tick,kline')]);
    const requests = results.flat();
    expect(requests.length).toBe(6);
    expect(arrivalBoundBreaches('basic', requests)).toEqual([]);
    // Basic allows one request per second across all interfaces, counted until each settled: six
    // requests of 50-100 ms span at least 5 s plus five answers.
    const sorted = [...requests].sort((a, b) => a.startMs - b.startMs);
    expect(sorted[5]!.startMs - sorted[0]!.startMs).toBeGreaterThanOrEqual(5 * 1_050);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]!.startMs - sorted[i - 1]!.settleMs).toBeGreaterThanOrEqual(1_000);
  });

  it('keeps three worker processes saturating the plan at the simulator free of refusals', async () => {
    const token = `tok-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const sim = await startSimulator({ tokens: { [token]: 'premium' }, seed: 3 });
    try {
      const results = await Promise.all(
        [1, 2, 3].map(() =>
          runWorker({
            QF_TEST_TOKEN: token,
            QF_TEST_PLAN: 'premium',
            QF_TEST_PREFIX: prefix,
            QF_TEST_BASE_URL: sim.url,
            QF_TEST_DURATION_MS: '8000',
            QF_TEST_LOOPS: '8',
          }),
        ),
      );
      const requests = results.flat();
      const refused = sim.log.refused().map((r) => `${r.endpoint} by ${r.refusedBy}`);
      expect(refused).toEqual([]);
      expect(arrivalBoundBreaches('premium', requests)).toEqual([]);
      // The plan, not the gate, was the limit: 8 s at 10/s less a round trip per window.
      expect(requests.length).toBeGreaterThan(60);
      expect(sim.log.entries().length).toBe(requests.length);
    } finally {
      await sim.close();
    }
  });

  it('counts a request of another worker until it settled: in flight it blocks, then from its settle', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const options = { redis: redis.url, token: 'tok-settle', limits: planLimits('basic'), keyPrefix: prefix };
    const a = new StoreClient(new RedisWindowStore(options), options.limits);
    const b = new StoreClient(new RedisWindowStore(options), options.limits);
    try {
      const first = await a.acquire('kline');
      let second: RedisStartTicket | undefined;
      const waiting = b.acquire('depth-tick').then((r) => (second = r));
      // Basic: one per second. Two seconds after the first start it is still in flight: B waits.
      await sleep(2_000);
      expect(second).toBeUndefined();
      const probe = new Redis(redis.url);
      const [key] = (await probe.keys(`${prefix}:*:quota:rule:combined`)) as string[];
      expect(Number(await probe.zscore(key!, first.id))).toBeGreaterThan(first.serverMs + 2_000);
      await a.settle(first);
      const settledAt = Number(await probe.zscore(key!, first.id));
      await probe.quit();
      expect(settledAt).toBeGreaterThanOrEqual(first.serverMs + 2_000);
      await waiting;
      // The next start waits a window (plus the margin) from the settle, not from the start…
      expect(second!.serverMs - settledAt).toBeGreaterThanOrEqual(
        1_000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs,
      );
      // …and no longer than the settle poll plus a little scheduling.
      expect(second!.serverMs - settledAt).toBeLessThan(1_000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs + 300);
      await b.settle(second!);
    } finally {
      await Promise.all([a.store.close(), b.store.close()]);
    }
  });

  it('counts a reservation whose worker died mid-request at its in-flight bound, then lets others go', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const options = {
      redis: redis.url,
      token: 'tok-dead',
      limits: planLimits('basic'),
      keyPrefix: prefix,
      staleAfterMs: 100,
      timeouts: { requestMs: 400 },
    };
    const dead = new StoreClient(new RedisWindowStore(options), options.limits);
    const first = await dead.acquire('kline');
    await dead.store.close(); // never settles: like a worker killed while its request was out
    const other = new StoreClient(new RedisWindowStore(options), options.limits);
    try {
      const second = await other.acquire('kline');
      // Bound = staleAfterMs + timeout + 1 s in transit + margin; then a whole window.
      const bound = 100 + 400 + 1_000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs;
      expect(second.serverMs - first.serverMs).toBeGreaterThanOrEqual(
        bound + 1_000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs,
      );
      expect(second.serverMs - first.serverMs).toBeLessThan(
        bound + 1_000 + REDIS_WINDOW_STORE_DEFAULTS.marginMs + 300,
      );
      await other.settle(second);
    } finally {
      await other.store.close();
    }
  });

  it('starts nothing while Redis is down, holds after it lost its data, and resumes', async () => {
    const own = await startRedisServer(); // this test stops Redis, so it never uses REDIS_URL
    const events: RedisQuotaEvent[] = [];
    const holdMs = 1_500;
    /** Acquire replies lost before the re-seed (while Redis was down, none reached it). */
    let lostAtReset = 0;
    const scheduler = new SharedPlanScheduler({
      redis: own.url,
      token: `tok-${randomUUID()}`,
      limits: planLimits('premium'),
      lostStateHoldMs: holdMs,
      commandTimeoutMs: 300,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'state-reset') lostAtReset = scheduler.store.stats().lostReplies;
      },
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
      // Warm-up (connection, script load) varies with the machine's load: wait for a steady stream.
      for (const until = Date.now() + 15_000; starts.length <= 5 && Date.now() < until;) await sleep(50);
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
      // The outage, Redis back, its data lost: once. (On a loaded machine a command may later take
      // longer than the 300 ms allowed, a short outage of its own: reported, without a reset.)
      const types = events.map((e) => e.type);
      expect(types.slice(0, 3)).toEqual(['redis-unavailable', 'redis-available', 'state-reset']);
      expect(types.filter((t) => t === 'state-reset')).toHaveLength(1);
      // The worker re-seeded its own starts of the day into the new generation.
      const probe = new Redis(own.url);
      // The day's counter, not the `:base` a re-seed leaves beside it (what the worker last read).
      const dayKeys = ((await probe.keys('*:quota:day:*')) as string[]).filter((k) => !k.endsWith(':base'));
      const dayCount = Number(await probe.get(dayKeys[0]!));
      await probe.quit();
      // Every start counted; beyond them, at most the starts whose acquire reply was lost since
      // the re-seed (under load a reply may time out after the script recorded the start).
      expect(dayCount).toBeGreaterThanOrEqual(starts.length);
      expect(dayCount - starts.length).toBeLessThanOrEqual(scheduler.store.stats().lostReplies - lostAtReset);
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
    const a = new StoreClient(new RedisWindowStore(options), limits, { dailyResetTimeZone: 'UTC' });
    const b = new StoreClient(new RedisWindowStore(options), limits, { dailyResetTimeZone: 'UTC' });
    await a.acquire('kline');
    await b.acquire('depth-tick');
    await a.acquire('batch-kline');
    // The day is used up: neither worker is granted another start, whichever endpoint.
    const refusedBefore = [a.store.stats().refusedAttempts, b.store.stats().refusedAttempts];
    await sleep(1_100); // past the per-second rules: only the day refuses
    expect(await a.tryOnce('kline')).toBeUndefined();
    expect(await b.tryOnce('static-info')).toBeUndefined();
    expect(a.store.stats().refusedAttempts - refusedBefore[0]!).toBe(1);
    expect(b.store.stats().refusedAttempts - refusedBefore[1]!).toBe(1);
    expect(a.store.stats().acquired).toBe(2);
    expect(b.store.stats().acquired).toBe(1);
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
    await Promise.all([a.store.close(), b.store.close()]);
  });

  it("reports the token's daily budget as every worker used it: one that sent nothing says it is spent, until the zone's midnight", async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const limits = { ...planLimits('professional'), perDay: 3 };
    const options = {
      redis: redis.url,
      token: 'tok-day-budget',
      limits,
      keyPrefix: prefix,
      dailyResetTimeZone: 'UTC',
    };
    const a = new StoreClient(new RedisWindowStore(options), limits, { dailyResetTimeZone: 'UTC' });
    const b = new StoreClient(new RedisWindowStore(options), limits, { dailyResetTimeZone: 'UTC' });
    // A worker of the token that has not started a request (no state generation joined yet).
    const idle = new SharedPlanScheduler(options);
    try {
      expect(idle.dailyBudget()).toEqual({ used: 0, limit: 3, spent: false, resetsAtMs: undefined });
      await a.acquire('kline');
      await b.acquire('depth-tick');
      const wait = { timeout: 10_000, interval: 50 };
      await vi.waitFor(
        () => expect(idle.dailyBudget()).toEqual({ used: 2, limit: 3, spent: false, resetsAtMs: undefined }),
        wait,
      );
      await a.acquire('batch-kline');
      const now = new Date();
      const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      await vi.waitFor(
        () => expect(idle.dailyBudget()).toEqual({ used: 3, limit: 3, spent: true, resetsAtMs: midnight }),
        wait,
      );
      // Its metrics' source says the same: the day's starts are the token's, not its own none.
      expect(idle.stats().local.day).toMatchObject({ starts: 3, limit: 3 });
    } finally {
      await Promise.all([a.store.close(), b.store.close(), idle.close()]);
    }
  });

  it('keeps the token out of every Redis key and value', async () => {
    const token = `secret-${randomUUID()}`;
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const store = new RedisWindowStore({
      redis: redis.url,
      token,
      limits: planLimits('premium'),
      keyPrefix: prefix,
    });
    const quota = new StoreClient(store, planLimits('premium'));
    await quota.settle(await quota.acquire('kline'));
    await quota.acquire('batch-kline');
    await store.close();
    const probe = new Redis(redis.url);
    const keys = (await probe.keys(`${prefix}:*`)) as string[];
    expect(keys.length).toBeGreaterThan(3);
    for (const key of keys) {
      expect(key).not.toContain(token);
      const type = await probe.type(key);
      const dump =
        type === 'zset'
          ? await probe.zrange(key, '0', '-1')
          : type === 'string'
            ? [await probe.get(key)]
            : [];
      for (const value of dump) expect(value).not.toContain(token);
    }
    await probe.quit();
  });

  it("measures a refusal's wait from the latest instant it saw, though the wall clock stepped back", async () => {
    const limits = planLimits('free');
    const stepped = new ManualClock(Date.now() - 60_000); // the store's clock is a minute behind
    const store = new RedisWindowStore({
      redis: redis.url,
      token: `tok-${randomUUID()}`,
      limits,
      keyPrefix: `t${randomUUID().slice(0, 8)}`,
      clock: stepped,
    });
    const windows = new PlanWindows(limits, REDIS_WINDOW_STORE_DEFAULTS.marginMs, 'UTC');
    try {
      const nowMs = Date.now(); // the scheduler's time, which never goes back
      const specs = windows.specsFor('kline', nowMs);
      let first = await store.tryAcquire(specs, nowMs, 'kline');
      for (let i = 0; !first.acquired && i < 40; i++) {
        await sleep(100); // a Redis started lately holds a newcomer for the grace
        first = await store.tryAcquire(specs, nowMs, 'kline');
      }
      expect(first.acquired).toBe(true);
      if (first.acquired) await store.settle(first.ticket, nowMs);
      // The settle is stamped at the next millisecond (never early): past it, the start counts as
      // arrived, not as in flight.
      await sleep(5);
      const refused = await store.tryAcquire(specs, nowMs, 'kline');
      // Free allows one request per 10 s: the retry lies seconds after the scheduler's now, not
      // a minute before it (which made the scheduler ask Redis again every millisecond).
      expect(refused).toMatchObject({ acquired: false });
      if (!refused.acquired) expect(refused.retryAtMs).toBeGreaterThan(nowMs + 1_000);
      expect(store.earliestStart(specs, nowMs)).toBeGreaterThan(nowMs + 1_000);
    } finally {
      await store.close();
    }
  });

  it('rejects a waiting request on close and on abort, and refuses bad options naming them', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const scheduler = new SharedPlanScheduler({
      redis: redis.url,
      token: 'tok-close',
      limits: planLimits('free'),
      keyPrefix: prefix,
    });
    let sent = 0;
    const send = async () => void sent++;
    await scheduler.schedule({ endpoint: 'kline', priority: 'live' }, send); // Free: the next one waits 10 s
    const controller = new AbortController();
    const aborted = scheduler.schedule(
      { endpoint: 'kline', priority: 'live', signal: controller.signal },
      send,
    );
    const waiting = scheduler.schedule({ endpoint: 'kline', priority: 'live' }, send);
    await sleep(300);
    controller.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    void scheduler.close();
    await expect(waiting).rejects.toMatchObject({ code: 'QF_CLOSED' });
    expect(sent).toBe(1);
    expect(scheduler.stats().shared).toMatchObject({ acquired: 1 });
    expect(
      () => new RedisWindowStore({ redis: 'http://nope', token: 't', limits: planLimits('free') }),
    ).toThrow(ClusterError);
    expect(
      () => new RedisWindowStore({ redis: redis.url, token: 't', limits: planLimits('free'), marginMs: -1 }),
    ).toThrow(/"marginMs"/);
    expect(
      () =>
        new RedisWindowStore({ redis: redis.url, token: 't', limits: planLimits('free'), staleAfterMs: 50 }),
    ).toThrow(/"staleAfterMs" must be a finite number >= 100/);
    // A closed store makes a scheduler still using it wait, not spin.
    const closedStore = new RedisWindowStore({ redis: redis.url, token: 't', limits: planLimits('free') });
    await closedStore.close();
    expect(closedStore.earliestStart([], Date.now())).toBe(Number.POSITIVE_INFINITY);
  });
});

/** Runs test/support/redis-quota-worker.ts with `env` and returns the requests it printed. */
function runWorker(env: Record<string, string>): Promise<TimedRequest[]> {
  const worker = fileURLToPath(new URL('./support/redis-quota-worker.ts', import.meta.url));
  return new Promise<TimedRequest[]>((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', worker], {
      env: { ...process.env, QF_TEST_REDIS_URL: redis.url, ...env },
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
            .map((line) => JSON.parse(line) as TimedRequest),
        );
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
