import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ClusterMembership,
  clusterSync,
  type ClusterSyncHandle,
  type MembershipView,
  type ShareableRun,
} from '@quoteflow/cluster';
import type { Clock } from '@quoteflow/core';
import { DatasetWriter } from '@quoteflow/sinks';
import { MIN, T0, bar } from '../packages/operators/test-support/bars.js';
import { testRedis, type TestRedis } from './support/redis-server.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await testRedis();
});
afterAll(async () => {
  await redis?.close();
});

const ITEMS = Array.from({ length: 30 }, (_, i) => `ITEM${i}`);
const HEARTBEAT_MS = 200;

/** One run of one worker: which items, from when to when (stop finished = flushed). */
interface RunRecord {
  readonly worker: string;
  readonly items: readonly string[];
  readonly startMs: number;
  endMs: number;
}

/** A fake run that records its lifetime; stopping it takes `flushMs` (in-flight work flushing). */
function fakeRun(
  worker: string,
  items: readonly string[],
  log: RunRecord[],
  flushMs = 50,
): ShareableRun<number> {
  const record: RunRecord = { worker, items, startMs: Date.now(), endMs: Number.POSITIVE_INFINITY };
  log.push(record);
  let resolve!: (n: number) => void;
  const done = new Promise<number>((r) => (resolve = r));
  let stopping: Promise<number> | undefined;
  return {
    done,
    stop: () => {
      stopping ??= new Promise<number>((r) =>
        setTimeout(() => {
          record.endMs = Date.now();
          resolve(items.length);
          r(items.length);
        }, flushMs),
      );
      return stopping;
    },
  };
}

/** Items covered at `atMs` by some run, with the number of runs covering each. */
function coverage(log: readonly RunRecord[], atMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of log)
    if (r.startMs <= atMs && atMs < r.endMs)
      for (const item of r.items) out.set(item, (out.get(item) ?? 0) + 1);
  return out;
}

/** Fails if two runs held one item at the same time. */
function expectNoOverlap(log: readonly RunRecord[]): void {
  for (const item of ITEMS) {
    const runs = log.filter((r) => r.items.includes(item)).sort((a, b) => a.startMs - b.startMs);
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.startMs, `${item} held twice`).toBeGreaterThanOrEqual(runs[i - 1]!.endMs);
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now();
}

function startWorker(
  name: string,
  group: string,
  log: RunRecord[],
  client?: Redis,
): ClusterSyncHandle<number> {
  const membership = new ClusterMembership({
    redis: client ?? redis.url,
    token: 'tok-membership',
    group,
    workerId: name,
    heartbeatMs: HEARTBEAT_MS,
    ttlFactor: 3,
  });
  return clusterSync({ membership, items: ITEMS, run: (items) => fakeRun(name, items, log) });
}

const allCoveredOnce = (log: readonly RunRecord[]) => () => {
  const c = coverage(log, Date.now());
  return ITEMS.every((item) => c.get(item) === 1);
};

describe('clusterSync over Redis membership', () => {
  it('divides the items among three workers, each item to exactly one', async () => {
    const log: RunRecord[] = [];
    const group = `g-${randomUUID()}`;
    const workers = ['w1', 'w2', 'w3'].map((w) => startWorker(w, group, log));
    await until(allCoveredOnce(log), 5_000);
    await until(
      () => new Set(log.filter((r) => r.endMs === Number.POSITIVE_INFINITY).map((r) => r.worker)).size === 3,
      5_000,
    );
    const results = await Promise.all(workers.map((w) => w.stop()));
    expect(results.flat().length).toBeGreaterThan(0);
    expectNoOverlap(log);
  });

  it('moves a gracefully stopped worker’s items to the others within about one heartbeat', async () => {
    const log: RunRecord[] = [];
    const group = `g-${randomUUID()}`;
    const workers = ['w1', 'w2', 'w3'].map((w) => startWorker(w, group, log));
    await until(allCoveredOnce(log), 5_000);
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS)); // settle: every worker has seen all three
    await workers[2]!.stop();
    const stoppedAt = Date.now();
    const coveredAt = await until(allCoveredOnce(log), 5_000);
    expect(coveredAt - stoppedAt).toBeLessThan(HEARTBEAT_MS * 2 + 500);
    await Promise.all(workers.slice(0, 2).map((w) => w.stop()));
    expectNoOverlap(log);
  });

  it('fences a worker cut off from Redis and lets the others take its items only after it stopped', async () => {
    const log: RunRecord[] = [];
    const group = `g-${randomUUID()}`;
    const cutClient = new Redis(redis.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 150,
      lazyConnect: false,
    });
    cutClient.on('error', () => undefined);
    const workers = [
      startWorker('w1', group, log),
      startWorker('w2', group, log),
      startWorker('w3', group, log, cutClient),
    ];
    await until(allCoveredOnce(log), 5_000);
    await until(() => log.some((r) => r.worker === 'w3' && r.endMs === Number.POSITIVE_INFINITY), 5_000);
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
    const w3Items = log.filter((r) => r.worker === 'w3').at(-1)!.items;
    expect(w3Items.length).toBeGreaterThan(0);
    const cutAt = Date.now();
    cutClient.disconnect(); // a network partition: w3 lives on but cannot reach Redis
    const coveredAt = await until(() => {
      const c = coverage(log, Date.now());
      return (
        w3Items.every((item) =>
          log.some(
            (r) => r.worker !== 'w3' && r.items.includes(item) && r.endMs === Number.POSITIVE_INFINITY,
          ),
        ) && ITEMS.every((i) => c.get(i) === 1)
      );
    }, 10_000);
    // Takeover: TTL (3 heartbeats) + at most one survivor heartbeat + stop/start of the runs.
    expect(coveredAt - cutAt).toBeLessThan(HEARTBEAT_MS * 5 + 500);
    // w3 stopped its run (fenced) before anyone else started one of its items.
    const w3End = log.filter((r) => r.worker === 'w3').at(-1)!.endMs;
    expect(w3End).toBeLessThan(Number.POSITIVE_INFINITY);
    expectNoOverlap(log);
    await Promise.all(workers.map((w) => w.stop()));
    cutClient.disconnect();
  });
});

describe('a membership’s start and its view of the others', () => {
  it('joins without a fenced view when Redis answers at its start', async () => {
    const membership = new ClusterMembership({
      redis: redis.url,
      token: 'tok-start',
      group: `start-${randomUUID()}`,
      heartbeatMs: HEARTBEAT_MS,
    });
    const views: MembershipView[] = [];
    membership.views$.subscribe((v) => views.push(v));
    try {
      membership.start();
      await until(() => views.length > 0, 5_000);
      // Its first view: itself, live (a heartbeat sent before the connection was up used to fence it).
      expect(views[0]).toEqual({ members: [membership.workerId], fenced: false });
    } finally {
      await membership.close();
    }
    expect(views.some((v) => v.fenced)).toBe(false);
  });

  it('sees a silent member gone when its TTL runs out, not up to a heartbeat later', async () => {
    const group = `silent-${randomUUID()}`;
    const heartbeatMs = 2_000; // TTL 6 s
    const membership = new ClusterMembership({
      redis: redis.url,
      token: 'tok-silent',
      group,
      workerId: 'live',
      heartbeatMs,
      ttlFactor: 3,
    });
    const reader = new Redis(redis.url);
    const views: (MembershipView & { atMs: number })[] = [];
    membership.views$.subscribe((v) => views.push({ ...v, atMs: Date.now() }));
    try {
      membership.start();
      await until(() => views.length > 0, 5_000); // a heartbeat just got through
      const [key] = await reader.keys(`*:group:${group}:members`);
      const [seconds, micros] = await reader.time();
      // A member last seen 3.5 s ago (the server's clock): the next heartbeat, 2 s from now, still
      // finds it live; its TTL runs out 2.5 s from now, half a heartbeat before the one after.
      await reader.zadd(key!, Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000) - 3_500, 'silent');
      const expiresAt = Date.now() + 2_500;
      await until(() => views.some((v) => v.members.includes('silent')), 10_000);
      const goneAt = await until(() => {
        const last = views.at(-1)!;
        return !last.members.includes('silent') && last.members.includes('live');
      }, 10_000);
      expect(goneAt - expiresAt).toBeLessThan(600);
      expect(views.every((v) => !v.fenced)).toBe(true);
    } finally {
      reader.disconnect();
      await membership.close();
    }
  });
});

describe('a worker’s lease on a monotonic clock', () => {
  // Longer than the other tests' heartbeat: a reply later than ½ heartbeat makes a lease look
  // invalid for a moment (by design: only a confirmed heartbeat counts), and a loaded machine
  // delays replies by a few hundred ms; what these tests pause is longer than the lease anyway.
  const LEASE_HEARTBEAT_MS = 800;
  const membershipOn = (clock?: Clock, group = `lease-${randomUUID()}`) =>
    new ClusterMembership({
      redis: redis.url,
      token: 'tok-lease',
      group,
      heartbeatMs: LEASE_HEARTBEAT_MS,
      ttlFactor: 3,
      ...(clock === undefined ? {} : { clock }),
    });
  // Valid while its last heartbeat that got through was sent less than TTL - ½ heartbeat ago.
  const LEASE_MS = LEASE_HEARTBEAT_MS * 3 - LEASE_HEARTBEAT_MS / 2;
  const realDateNow = Date.now.bind(Date);
  const stepWallClock = (byMs: number) =>
    vi.spyOn(Date, 'now').mockImplementation(() => realDateNow() + byMs);
  afterEach(() => vi.restoreAllMocks());

  it('ends the lease of a paused worker on its clock, whatever the wall clock does', async () => {
    // A clock moved by hand; once the worker is paused, its timers (the heartbeats) no longer fire.
    let nowMs = 1_000;
    let paused = false;
    const clock: Clock = {
      now: () => nowMs,
      setTimeout: (callback, delayMs) => setTimeout(() => paused || callback(), delayMs),
      clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
    };
    const membership = membershipOn(clock);
    try {
      membership.start();
      await until(() => membership.leaseValid(), 5_000); // a heartbeat sent at 1,000 got through
      paused = true;
      stepWallClock(-60_000);
      nowMs += LEASE_MS - 1;
      expect(membership.leaseValid()).toBe(true);
      nowMs += 1;
      expect(membership.leaseValid()).toBe(false);
    } finally {
      await membership.close();
    }
  });

  it('fences the commit of a worker paused past its lease while its wall clock stepped back a minute', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-lease-'));
    const membership = membershipOn(); // the production default: monotonic time
    const writer = new DatasetWriter({
      dir,
      format: 'ndjson',
      encoderThreads: 0,
      fence: () => membership.leaseValid(),
    });
    try {
      membership.start();
      await until(() => membership.leaseValid(), 5_000);
      await writer.write(bar('BTCUSDT', 1, T0, 1));
      expect(await writer.flush()).toHaveLength(1); // the lease holds: committed
      await writer.write(bar('BTCUSDT', 1, T0 + MIN, 1));
      // Paused (SIGSTOP, a VM freeze: nothing of this process runs) just after a check that found
      // the lease valid, so it ends within LEASE_MS of here; meanwhile the wall clock is set back.
      await until(() => membership.leaseValid(), 5_000);
      const pausedAt = performance.now();
      stepWallClock(-60_000);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LEASE_MS);
      expect(performance.now() - pausedAt).toBeGreaterThanOrEqual(LEASE_MS);
      // On time, not a minute later: over the moment the process runs again, before any heartbeat.
      expect(membership.leaseValid()).toBe(false);
      await expect(writer.flush()).rejects.toMatchObject({ code: 'QF_FENCED' });
      expect(membership.leaseValid()).toBe(false);
    } finally {
      await writer.close().catch(() => undefined);
      await membership.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps a live worker’s lease when its wall clock steps a minute forward', async () => {
    const group = `lease-${randomUUID()}`;
    const membership = membershipOn(undefined, group);
    const reader = new Redis(redis.url);
    try {
      const views: MembershipView[] = [];
      membership.views$.subscribe((v) => views.push(v));
      membership.start();
      await until(() => membership.leaseValid(), 5_000);
      const seen = views.length;
      const [key] = await reader.keys(`*:group:${group}:members`);
      const lastBeatMs = async () => Number(await reader.zscore(key!, membership.workerId));
      const steppedAtBeat = await lastBeatMs();
      stepWallClock(60_000);
      expect(membership.leaseValid()).toBe(true);
      // Three more heartbeats get through (the server stamps them), and none reports a lapse.
      await vi.waitFor(
        async () => expect(await lastBeatMs()).toBeGreaterThanOrEqual(steppedAtBeat + 3 * LEASE_HEARTBEAT_MS),
        { timeout: 15_000, interval: LEASE_HEARTBEAT_MS / 4 },
      );
      expect(membership.leaseValid()).toBe(true);
      expect(views.slice(seen).some((v) => v.fenced)).toBe(false);
    } finally {
      reader.disconnect();
      await membership.close();
    }
  });
});
