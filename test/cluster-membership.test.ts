import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClusterMembership,
  clusterSync,
  type ClusterSyncHandle,
  type ShareableRun,
} from '@quoteflow/cluster';
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
