import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WindowSpec } from '@quoteflow/core';
import { MemoryWindowStore } from '@quoteflow/core/internal';
import { ACQUIRE_SCRIPT } from '../packages/cluster/src/internal/quota-scripts.js';
import { testRedis, type TestRedis } from './support/redis-server.js';

// The shared quota's check-and-record script against core's in-process store as the oracle: the
// same windows, fed the instants the Redis server stamped (its own clock), must allow and refuse
// the same starts and name the same earliest instant.

let redis: TestRedis;
let client: Redis & { qfAcquire(n: number, ...args: (string | number)[]): Promise<unknown> };
beforeAll(async () => {
  redis = await testRedis();
  client = new Redis(redis.url) as typeof client;
  client.defineCommand('qfAcquire', { lua: ACQUIRE_SCRIPT });
});
afterAll(async () => {
  client?.disconnect();
  await redis?.close();
});

interface Windows {
  readonly sliding: { windowMs: number; limit: number };
  readonly rolling: { windowMs: number; limit: number; slotMs: number };
  readonly bucketLimit: number;
}

/** One attempt through the script: `[status, waitMs or epoch, serverNow]`. */
async function attempt(ns: string, epoch: string, w: Windows, member: string, endsAtMs: number) {
  const keys = [
    `${ns}:epoch`,
    `${ns}:pause`,
    `${ns}:seq`,
    `${ns}:members`,
    `${ns}:expected`,
    `${ns}:reseeded`,
    `${ns}:joins`,
    `${ns}:watchers`,
    `${ns}:rule`,
    `${ns}:day`,
    `${ns}:rolling`,
    `${ns}:rolling:n`,
  ];
  // No hold, no grace, settled at once (bound 0): every start counts from the instant recorded.
  const args = [epoch, 0, 1, 1, member, 0, 10, 'p1', 0, 60_000, 1, 1_500];
  args.push(w.sliding.windowMs, w.sliding.limit, w.sliding.windowMs + 60_000, 1);
  args.push(w.bucketLimit, endsAtMs);
  args.push(w.rolling.windowMs, w.rolling.limit, w.rolling.slotMs);
  const reply = (await client.qfAcquire(keys.length, ...keys, ...args)) as [number, number | string, number];
  return { status: Number(reply[0]), value: reply[1], now: Number(reply[2]) };
}

describe('the shared quota script', () => {
  it('allows and refuses exactly what the in-process store does, on the server clock', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          sliding: fc.record({
            windowMs: fc.integer({ min: 100, max: 600 }),
            limit: fc.integer({ min: 1, max: 4 }),
          }),
          rolling: fc.record({
            windowMs: fc.integer({ min: 300, max: 1_500 }),
            limit: fc.integer({ min: 2, max: 8 }),
            slotMs: fc.constantFrom(50, 100, 250),
          }),
          bucketLimit: fc.integer({ min: 5, max: 30 }),
        }),
        fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 10, maxLength: 30 }),
        async (w, pauses) => {
          const ns = `prop-${randomUUID()}`;
          const endsAtMs = Date.now() + 3_600_000;
          const opened = await attempt(ns, '', w, 'm0', endsAtMs);
          expect(opened.status).toBe(-1); // a new generation: its id, then attempts in it
          const epoch = String(opened.value);
          const store = new MemoryWindowStore();
          const specs: WindowSpec[] = [
            { kind: 'sliding', key: 'rule', windowMs: w.sliding.windowMs, limit: w.sliding.limit },
            { kind: 'bucket', key: 'day', limit: w.bucketLimit, endsAtMs },
            { kind: 'rolling', key: 'rolling', ...w.rolling },
          ];
          for (const [i, pauseMs] of pauses.entries()) {
            await new Promise((r) => setTimeout(r, pauseMs));
            const got = await attempt(ns, epoch, w, `m${i + 1}`, endsAtMs);
            const expected = store.tryAcquire(specs, got.now);
            if (expected.acquired) expect(got, `attempt ${i}`).toMatchObject({ status: 1 });
            else {
              expect(got.status, `attempt ${i}`).toBe(0);
              expect(got.now + Number(got.value), `attempt ${i}: earliest start`).toBe(expected.retryAtMs);
            }
          }
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});

/**
 * One attempt of participant `p` for endpoint `e` with waiting lists: windows `combined` (shared by
 * both endpoints, `limit`) and `rule-<e>` (never full), ten minutes long and settled at once (bound
 * 0), so only the test frees them; a grace of ten minutes, so no waiter lapses. Returns the status.
 */
async function queuedAttempt(ns: string, epoch: string, limit: number, p: number, e: string, member: string) {
  const waiter = `p${p}/${e}`;
  const keys = [
    ...['epoch', 'pause', 'seq', 'members', 'expected', 'reseeded', 'joins', 'watchers'].map(
      (k) => `${ns}:${k}`,
    ),
    `${ns}:combined`,
    `${ns}:rule-${e}`,
    `${ns}:tickets`,
    `${ns}:waiters`,
    `${ns}:combined:queue`,
    `${ns}:rule-${e}:queue`,
  ];
  const args = [epoch, 0, 2, 0, member, 0, 10, `p${p}`, 0, 1_200_000, 0, 1_500];
  args.push(600_000, limit, 1_200_000, 1, 600_000, 1_000, 1_200_000, 1, waiter, 600_000);
  const reply = (await client.qfAcquire(keys.length, ...keys, ...args)) as [number, number | string];
  return { status: Number(reply[0]), value: reply[1] };
}

describe('the waiting lists of the shared quota script', () => {
  it('serve a window in order of first refusal, a participant never held back by its own waiters', async () => {
    type Step = { readonly free: true } | { readonly p: number; readonly e: 'a' | 'b' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 1, arbitrary: fc.constant({ free: true as const }) },
      {
        weight: 4,
        arbitrary: fc.record({
          p: fc.integer({ min: 0, max: 2 }),
          e: fc.constantFrom('a' as const, 'b' as const),
        }),
      },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { minLength: 5, maxLength: 40 }),
        async (limit, steps) => {
          const ns = `queue-${randomUUID()}`;
          const opened = await queuedAttempt(ns, '', limit, 0, 'a', 'm0');
          expect(opened.status).toBe(-1);
          const epoch = String(opened.value);
          // The oracle: starts in the window, and the waiters in order of their first refusal.
          let inWindow = 0;
          const waiting: string[] = [];
          for (const [i, s] of steps.entries()) {
            if ('free' in s) {
              await client.del(`${ns}:combined`);
              inWindow = 0;
              continue;
            }
            const me = `p${s.p}/${s.e}`;
            const at = waiting.indexOf(me);
            const ahead = (at === -1 ? waiting : waiting.slice(0, at)).filter(
              (w) => !w.startsWith(`p${s.p}/`),
            );
            const granted = inWindow < limit && ahead.length < limit - inWindow;
            if (granted) {
              inWindow++;
              if (at !== -1) waiting.splice(at, 1);
            } else if (at === -1) waiting.push(me);
            const got = await queuedAttempt(ns, epoch, limit, s.p, s.e, `m${i + 1}`);
            expect(got.status, `step ${i}: ${me}, waiting ${waiting.join(' ')}`).toBe(granted ? 1 : 0);
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
