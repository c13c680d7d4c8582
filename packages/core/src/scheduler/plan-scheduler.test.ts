import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { planLimits, type EndpointKind } from '../plans.js';
import type { Priority } from '../request-scheduler.js';
import { zonedToUtcMs } from '../internal/zoned-time.js';
import { PlanScheduler, type PlanSchedulerOptions } from './plan-scheduler.js';
import { sharedSchedulerFor } from './shared-scheduler-for.js';
import { InvalidOptionError, QuoteflowError } from '../errors.js';
import { ManualClock } from '../clock.js';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const T0 = Date.UTC(2026, 0, 5, 4, 0, 0); // 12:00 in Shanghai: far from midnight

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Bottleneck's dispatch hop (a few timer turns) makes a start a few ms later than the gate allows. */
const HOP_MS = 15;
function near(actual: readonly number[], ideal: readonly number[]): void {
  expect(actual.length).toBe(ideal.length);
  actual.forEach((t, i) => {
    expect(t).toBeGreaterThanOrEqual(ideal[i]!);
    expect(t).toBeLessThanOrEqual(ideal[i]! + HOP_MS);
  });
}

interface Start {
  readonly id: string;
  readonly atMs: number;
}

function harness(plan: Parameters<typeof planLimits>[0], options: PlanSchedulerOptions = {}) {
  const scheduler = new PlanScheduler(planLimits(plan), options);
  const starts: Start[] = [];
  const submit = (
    id: string,
    endpoint: EndpointKind,
    priority: Priority = 'backfill',
    sourceId?: string,
    signal?: AbortSignal,
  ) =>
    scheduler.schedule(
      {
        endpoint,
        priority,
        ...(sourceId === undefined ? {} : { sourceId }),
        ...(signal === undefined ? {} : { signal }),
      },
      async () => {
        starts.push({ id, atMs: Date.now() - T0 });
        return id;
      },
    );
  return { scheduler, starts, submit };
}

describe('PlanScheduler', () => {
  it('starts a job at once when no rule binds and settles with its result', async () => {
    const { scheduler, starts, submit } = harness('professional');
    const result = submit('a', 'kline');
    await vi.advanceTimersByTimeAsync(HOP_MS);
    await expect(result).resolves.toBe('a');
    near(
      starts.map((s) => s.atMs),
      [0],
    );
    await scheduler.close();
  });

  it('spaces basic-plan requests by the window plus the margin', async () => {
    const { scheduler, starts, submit } = harness('basic', { marginMs: 25 });
    const all = Promise.all(['a', 'b', 'c'].map((id) => submit(id, 'kline')));
    await vi.advanceTimersByTimeAsync(5_000);
    await all;
    const [a, b, c] = starts.map((s) => s.atMs) as [number, number, number];
    near([a, b - a, c - b], [0, 1025, 1025]);
    await scheduler.close();
  });

  it('lets a premium burst of ten through at once and holds the eleventh for the window', async () => {
    const { scheduler, starts, submit } = harness('premium', { marginMs: 20, smoothing: 0 });
    const all = Promise.all(Array.from({ length: 12 }, (_, i) => submit(`k${i}`, 'kline')));
    await vi.advanceTimersByTimeAsync(3_000);
    await all;
    // The ten leave back to back (one dispatch hop each); the eleventh waits for the first + 1020.
    const t = starts.map((s) => s.atMs);
    expect(t[9]! - t[0]!).toBeLessThan(10 * HOP_MS);
    near([t[10]! - t[0]!, t[11]! - t[1]!], [1020, 1020]);
    await scheduler.close();
  });

  it.each(['basic', 'premium', 'professional'] as const)(
    'keeps every %s rule even if each request arrived as late as its answer (random latencies)',
    async (plan) => {
      const limits = planLimits(plan);
      const scheduler = new PlanScheduler(limits, { marginMs: 0, smoothing: 0 });
      const done: { startMs: number; settleMs: number }[] = [];
      let seed = 7;
      const latency = () => ((seed = (seed * 16807) % 2147483647) % 400) + 1; // 1–400 ms
      const all = Promise.all(
        Array.from({ length: 40 }, () =>
          scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => {
            const startMs = Date.now();
            await new Promise((resolve) => setTimeout(resolve, latency()));
            done.push({ startMs, settleMs: Date.now() });
          }),
        ),
      );
      await vi.advanceTimersByTimeAsync(60_000);
      await all;
      // Adversarial arrivals: every earlier request as late as possible (its settle), this one as
      // early as possible (its start). Still at most `limit` in any window of every rule.
      for (const rule of limits.rules.filter((r) => r.scope === 'all' || r.scope === 'kline')) {
        for (const j of done) {
          const close = done.filter(
            (i) => i !== j && i.startMs <= j.startMs && i.settleMs > j.startMs - rule.windowMs,
          );
          expect(close.length, `${rule.id} at ${j.startMs - T0}`).toBeLessThan(rule.limit);
        }
      }
      await scheduler.close();
    },
  );

  it('spreads a burst over half the window by default (smoothing 0.5), at the same sustained rate', async () => {
    const { scheduler, starts, submit } = harness('premium', { marginMs: 25 });
    const all = Promise.all(Array.from({ length: 20 }, (_, i) => submit(`k${i}`, 'kline')));
    await vi.advanceTimersByTimeAsync(5_000);
    await all;
    const t = starts.map((s) => s.atMs);
    // Consecutive starts at least ceil(0.5 × 1025 / 10) = 52 ms apart…
    for (let i = 1; i < t.length; i++) expect(t[i]! - t[i - 1]!).toBeGreaterThanOrEqual(52);
    // …and the window still admits ten per 1025 ms: the eleventh waits for the first.
    near([t[10]! - t[0]!], [1025]);
    await scheduler.close();
  });

  it('starts live jobs before backfill jobs queued earlier', async () => {
    const { scheduler, starts, submit } = harness('basic');
    const jobs = [submit('b1', 'kline'), submit('b2', 'kline'), submit('b3', 'kline')];
    await vi.advanceTimersByTimeAsync(10); // b1 starts at 0
    jobs.push(submit('l1', 'depth-tick', 'live'), submit('l2', 'kline', 'live'));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(jobs);
    expect(starts.map((s) => s.id)).toEqual(['b1', 'l1', 'l2', 'b2', 'b3']);
    await scheduler.close();
  });

  it('shares a priority round-robin across sources', async () => {
    const { scheduler, starts, submit } = harness('basic');
    const jobs = [
      ...['a1', 'a2', 'a3'].map((id) => submit(id, 'kline', 'backfill', 'A')),
      ...['b1', 'b2'].map((id) => submit(id, 'kline', 'backfill', 'B')),
      submit('c1', 'kline', 'backfill', 'C'),
    ];
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(jobs);
    expect(starts.map((s) => s.id)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    await scheduler.close();
  });

  it('removes an aborted queued job and rejects it with the abort reason', async () => {
    const { scheduler, starts, submit } = harness('basic');
    const controller = new AbortController();
    const first = submit('a', 'kline');
    const aborted = submit('b', 'kline', 'backfill', undefined, controller.signal);
    const third = submit('c', 'kline');
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error('user gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([first, third]);
    expect(starts.map((s) => s.id)).toEqual(['a', 'c']);
    near([starts[1]!.atMs - starts[0]!.atMs], [1025]);
    await scheduler.close();
  });

  it('rejects at once a job whose signal is already aborted', async () => {
    const { scheduler, starts, submit } = harness('basic');
    await expect(submit('a', 'kline', 'live', undefined, AbortSignal.abort('gone'))).rejects.toBe('gone');
    expect(starts).toEqual([]);
    await scheduler.close();
  });

  it('pauses after a rate-limit report, doubles the pause on a repeat, and paces the recovery', async () => {
    const { scheduler, starts, submit } = harness('premium', {
      marginMs: 0,
      rateLimitBackoffMs: 1_000,
      recoveryMs: 2_000,
    });
    const first = submit('first', 'kline');
    await vi.advanceTimersByTimeAsync(HOP_MS);
    await first;
    vi.setSystemTime(T0 + HOP_MS); // keep the arithmetic below round
    scheduler.reportRateLimited('kline');
    expect(scheduler.stats().pausedUntilMs).toBe(T0 + HOP_MS + 1_000);
    const jobs = Array.from({ length: 10 }, (_, i) => submit(`k${i}`, 'kline'));
    await vi.advanceTimersByTimeAsync(999);
    expect(starts.length).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000); // still inside the recovery (pause end + 2 × 2 s)
    await Promise.all(jobs);
    // Half the sustained rate (10/s → one per 200 ms) for recoveryMs, no burst.
    const t = starts.map((s) => s.atMs);
    near([t[1]!, t[2]! - t[1]!, t[3]! - t[2]!, t[4]! - t[3]!], [HOP_MS + 1_000, 200, 200, 200]);
    // A report before the recovery ended doubles the pause.
    scheduler.reportRateLimited('depth-tick');
    expect(scheduler.stats().pausedUntilMs).toBe(Date.now() + 2_000);
    await vi.advanceTimersByTimeAsync(60_000);
    await scheduler.close();
  });

  it("resets the daily total at midnight of the configured time zone ('calendar')", async () => {
    const midnight = zonedToUtcMs('Asia/Shanghai', 2026, 1, 6); // 2026-01-05T16:00Z
    vi.setSystemTime(midnight - 3_000);
    const limits = { ...planLimits('professional'), perDay: 2 };
    const scheduler = new PlanScheduler(limits, { marginMs: 25, dailyWindow: 'calendar' });
    const starts: number[] = [];
    const jobs = Array.from({ length: 4 }, () =>
      scheduler.schedule(
        { endpoint: 'kline', priority: 'backfill' },
        async () => void starts.push(Date.now()),
      ),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(jobs);
    const t = starts.map((s) => s - midnight);
    near([t[0]!, t[2]!], [-3_000, 0]);
    expect(t[1]!).toBeLessThan(0);
    expect(t[3]!).toBeLessThan(HOP_MS * 2);
    expect(scheduler.stats().day).toMatchObject({ starts: 2, limit: 2, resetsAtMs: midnight + 86_400_000 });
    await scheduler.close();
  });

  it('says the daily total is spent, how much was used and when a request may start again, per reading', async () => {
    const midnight = zonedToUtcMs('Asia/Shanghai', 2026, 1, 6); // 12 hours after T0
    const limits = { ...planLimits('professional'), perDay: 2 };
    for (const [dailyWindow, resetsAtMs] of [
      ['calendar', midnight],
      // The rolling 24 hours: the first start leaves them a day (plus margin, in-flight bound and
      // its minute's counter) later, well after midnight.
      ['both', undefined],
    ] as const) {
      vi.setSystemTime(T0);
      const scheduler = new PlanScheduler(limits, { marginMs: 25, dailyWindow });
      expect(scheduler.dailyBudget()).toEqual({ used: 0, limit: 2, spent: false, resetsAtMs: undefined });
      const send = () => scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => 'ok');
      const two = Promise.all([send(), send()]);
      await vi.advanceTimersByTimeAsync(2_000);
      await two;
      const budget = scheduler.dailyBudget();
      expect(budget).toMatchObject({ used: 2, limit: 2, spent: true });
      if (resetsAtMs !== undefined) expect(budget.resetsAtMs).toBe(resetsAtMs);
      else {
        expect(budget.resetsAtMs).toBeGreaterThan(T0 + 86_400_000);
        expect(budget.resetsAtMs).toBeLessThan(T0 + 86_400_000 + 3 * 60_000);
      }
      // A third request waits for exactly that instant.
      let thirdAtMs: number | undefined;
      const third = scheduler.schedule({ endpoint: 'kline', priority: 'backfill' }, async () => {
        thirdAtMs = Date.now();
      });
      await vi.advanceTimersByTimeAsync(budget.resetsAtMs! - Date.now() - 1);
      expect(thirdAtMs).toBeUndefined();
      await vi.advanceTimersByTimeAsync(HOP_MS + 1);
      await third;
      near([thirdAtMs!], [budget.resetsAtMs!]);
      expect(scheduler.dailyBudget().spent).toBe(false);
      await scheduler.close();
    }
  });

  it('counts a start just before midnight in both days (it may arrive after midnight)', async () => {
    const midnight = zonedToUtcMs('UTC', 2026, 1, 6);
    vi.setSystemTime(midnight - 10);
    const scheduler = new PlanScheduler(
      { ...planLimits('professional'), perDay: 1 },
      { marginMs: 25, dailyResetTimeZone: 'UTC', dailyWindow: 'calendar' },
    );
    const starts: number[] = [];
    const jobs = [1, 2].map(() =>
      scheduler.schedule({ endpoint: 'kline', priority: 'live' }, async () => void starts.push(Date.now())),
    );
    await vi.advanceTimersByTimeAsync(86_400_000 + 1_000);
    await Promise.all(jobs);
    expect(starts[0]! - midnight).toBeLessThan(0);
    near([starts[1]! - midnight], [86_400_000]);
    await scheduler.close();
  });

  it('keeps ten thousand queued jobs out of bottleneck: one timer, lazy feeding', async () => {
    const { scheduler, submit } = harness('basic');
    const jobs = Array.from({ length: 10_000 }, (_, i) => submit(`k${i}`, 'kline'));
    await vi.advanceTimersByTimeAsync(HOP_MS);
    expect(vi.getTimerCount()).toBeLessThanOrEqual(1);
    expect(scheduler.stats().queued).toEqual({ live: 0, backfill: 9_999 });
    const closed = scheduler.close();
    const results = await Promise.allSettled(jobs);
    await closed;
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect((rejected as PromiseRejectedResult).reason).toBeInstanceOf(QuoteflowError);
    expect((rejected as PromiseRejectedResult).reason.code).toBe('QF_CLOSED');
  });

  it('reports queue lengths, waits and rule windows in stats', async () => {
    const { scheduler, submit } = harness('basic');
    const jobs = [submit('a', 'kline', 'live'), submit('b', 'kline'), submit('c', 'kline')];
    await vi.advanceTimersByTimeAsync(HOP_MS);
    let stats = scheduler.stats();
    expect(stats.queued).toEqual({ live: 0, backfill: 2 });
    expect(stats.rules.find((r) => r.id === 'combined')).toMatchObject({
      startsInWindow: 1,
      limit: 1,
      fill: 1,
    });
    expect(stats.utilisation).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    await Promise.all(jobs);
    stats = scheduler.stats();
    expect(stats.waits.live.started).toBe(1);
    near([stats.waits.live.maxWaitMs], [0]);
    expect(stats.waits.backfill.started).toBe(2);
    near([stats.waits.backfill.maxWaitMs, stats.waits.backfill.meanWaitMs], [2050, (1025 + 2050) / 2]);
    expect(stats.startedPerEndpoint).toEqual({ kline: 3 });
    await scheduler.close();
  });

  it('refuses bad options when built, naming the option', () => {
    expect(() => new PlanScheduler(planLimits('basic'), { marginMs: -1 })).toThrow(/"marginMs"/);
    expect(() => new PlanScheduler(planLimits('basic'), { dailyResetTimeZone: 'Mars/Olympus' })).toThrow(
      /"dailyResetTimeZone"/,
    );
  });
});

describe('sharedSchedulerFor', () => {
  it("shares per machine through the state directory with share: 'machine', on the system clock only", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'qf-shared-machine-'));
    try {
      const token = 'shared-machine-token-3b7e';
      const scheduler = sharedSchedulerFor(token, planLimits('basic'), { share: 'machine', stateDir });
      expect(readdirSync(stateDir).some((f) => /^quota-[0-9a-f]{64}\.sqlite$/.test(f))).toBe(true);
      expect(sharedSchedulerFor(token, planLimits('basic'), { share: 'machine', stateDir })).toBe(scheduler);
      expect(() => sharedSchedulerFor(token, planLimits('basic'))).toThrow(/shares its quota per machine/);
      expect(() =>
        sharedSchedulerFor(token, planLimits('basic'), { share: 'machine', clock: new ManualClock(T0) }),
      ).toThrow(InvalidOptionError);
      await scheduler.close();
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('returns one scheduler per token and a new one after close', async () => {
    const a = sharedSchedulerFor('token-one-secret', planLimits('basic'));
    expect(sharedSchedulerFor('token-one-secret', planLimits('basic'))).toBe(a);
    expect(sharedSchedulerFor('token-two-secret', planLimits('basic'))).not.toBe(a);
    await a.close();
    const b = sharedSchedulerFor('token-one-secret', planLimits('basic'));
    expect(b).not.toBe(a);
    await b.close();
    await sharedSchedulerFor('token-two-secret', planLimits('basic')).close();
  });

  it('throws a clear error, without the token, when a token is registered with other limits', async () => {
    const a = sharedSchedulerFor('token-three-secret', planLimits('basic'));
    let error: unknown;
    try {
      sharedSchedulerFor('token-three-secret', planLimits('premium'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).code).toBe('QF_INVALID_OPTION');
    expect((error as Error).message).toMatch(/plan "basic".*plan "premium"/);
    expect((error as Error).message).not.toContain('token-three-secret');
    await a.close();
  });
});
