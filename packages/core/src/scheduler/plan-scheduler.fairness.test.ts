// Fair shares between sources of one scheduler, on a virtual clock (fake timers drive Date, the
// scheduler's clock and bottleneck's dispatch hop alike).
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { planLimits, type EndpointKind, type PlanLimits } from '../plans.js';
import type { Priority } from '../request-scheduler.js';
import { PLAN_SCHEDULER_DEFAULTS, PlanScheduler, type PlanSchedulerOptions } from './plan-scheduler.js';

const T0 = Date.UTC(2026, 0, 5, 4, 0, 0); // 12:00 in Shanghai: far from midnight
const MARGIN_MS = PLAN_SCHEDULER_DEFAULTS.marginMs;
/** Backfill's reserved share is one start in N. */
const N = Math.ceil(1 / PLAN_SCHEDULER_DEFAULTS.backfillShare);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

interface Start {
  readonly sourceId: string;
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
  readonly enqueuedAtMs: number;
  readonly startMs: number;
  settleMs: number;
}

interface SourceSpec {
  readonly sourceId: string;
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
}

/** A scheduler whose every start is logged; sends take `latencyMs()` of virtual time. */
function harness(limits: PlanLimits, options: PlanSchedulerOptions = {}, latencyMs = () => 3) {
  const scheduler = new PlanScheduler(limits, options);
  const starts: Start[] = [];
  const enqueued: { sourceId: string; atMs: number }[] = [];
  let outstanding = 0;
  const submit = (source: SourceSpec): Promise<void> => {
    const enqueuedAtMs = Date.now();
    enqueued.push({ sourceId: source.sourceId, atMs: enqueuedAtMs });
    outstanding++;
    return scheduler
      .schedule(source, async () => {
        const start: Start = { ...source, enqueuedAtMs, startMs: Date.now(), settleMs: Number.NaN };
        starts.push(start);
        await new Promise((resolve) => setTimeout(resolve, latencyMs()));
        start.settleMs = Date.now();
      })
      .finally(() => outstanding--);
  };
  let stopAtMs = Number.POSITIVE_INFINITY;
  /** Keeps `depth` jobs of `source` outstanding (queued or in flight) until `stop()`. */
  const saturate = (source: SourceSpec, depth = 2): void => {
    const loop = (): void => {
      if (Date.now() < stopAtMs) void submit(source).then(loop, () => undefined);
    };
    for (let i = 0; i < depth; i++) loop();
  };
  const stop = (): void => {
    stopAtMs = Date.now();
  };
  return { scheduler, starts, enqueued, submit, saturate, stop, outstanding: () => outstanding };
}

const depth: SourceSpec = { sourceId: 'depth-capture', endpoint: 'depth-tick', priority: 'live' };

/** Most starts in any window of each rule, nominal windows (what the service would count). */
function worstWindows(limits: PlanLimits, starts: readonly Start[]): Record<string, number> {
  const worst: Record<string, number> = {};
  for (const rule of limits.rules) {
    const t = starts.filter((s) => rule.scope === 'all' || rule.scope === s.endpoint).map((s) => s.startMs);
    let max = 0;
    for (let i = 0, j = 0; i < t.length; i++) {
      while (t[j]! <= t[i]! - rule.windowMs) j++;
      max = Math.max(max, i - j + 1);
    }
    worst[rule.id] = max;
  }
  return worst;
}

describe('PlanScheduler fair shares', () => {
  it('serves a kline source beside a depth poller that always has a request queued: half each', async () => {
    const limits = planLimits('premium');
    const { scheduler, starts, submit, saturate, stop } = harness(limits);
    saturate(depth);
    await vi.advanceTimersByTimeAsync(2_000); // the poller has had the plan to itself
    const kline: SourceSpec = { sourceId: 'AAPL.US:1', endpoint: 'kline', priority: 'live' };
    const from = Date.now();
    const jobs = Array.from({ length: 20 }, () => submit(kline));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(jobs);
    stop();
    // While the kline source had work queued, the starts alternated (one handed out ahead of it).
    const lastKline = Math.max(...starts.filter((s) => s.sourceId === kline.sourceId).map((s) => s.startMs));
    const during = starts.filter((s) => s.startMs >= from && s.startMs <= lastKline);
    const klineStarts = during.filter((s) => s.sourceId === kline.sourceId).length;
    expect(klineStarts).toBe(20);
    expect(during.length).toBeLessThanOrEqual(2 * 20 + 1);
    expect(during.length - klineStarts).toBeGreaterThanOrEqual(19); // the poller kept its half
    // 41 starts at the combined rule's 10 per 1025 ms (+ round trips): about four seconds.
    expect(lastKline - from).toBeLessThan(4_500);
    const s = scheduler.stats();
    expect(s.sources.map((x) => x.sourceId)).toEqual(['AAPL.US:1', 'depth-capture']);
    await vi.advanceTimersByTimeAsync(1_000);
    await scheduler.close();
  });

  it('lets a /batch-kline source start as soon as its own interval allows beside a depth poller', async () => {
    const limits = planLimits('premium'); // /batch-kline: 1 per 2 s; combined: 10 per s
    const { scheduler, starts, submit, saturate, stop } = harness(limits);
    saturate(depth);
    const batch: SourceSpec = { sourceId: 'kline-sync-live', endpoint: 'batch-kline', priority: 'live' };
    const jobs = Array.from({ length: 5 }, () => submit(batch));
    await vi.advanceTimersByTimeAsync(12_000);
    await Promise.all(jobs);
    stop();
    const t = starts.filter((s) => s.sourceId === batch.sourceId).map((s) => s.startMs);
    // Each one its interval (2 s + margin + the previous answer's 3 ms) after the previous one, plus at
    // most the one combined slot (~103 ms) a depth request handed out just before may take.
    for (let i = 1; i < t.length; i++)
      expect(t[i]! - t[i - 1]!).toBeLessThanOrEqual(2_000 + MARGIN_MS + 3 + 120);
    await vi.advanceTimersByTimeAsync(1_000);
    await scheduler.close();
  });

  it('keeps a backfill source moving beside a saturating live source: at least one start in N', async () => {
    const limits = planLimits('premium');
    const { scheduler, starts, submit, saturate, stop } = harness(limits);
    saturate(depth);
    await vi.advanceTimersByTimeAsync(1_000);
    const history: SourceSpec = { sourceId: 'AAPL.US:1', endpoint: 'kline', priority: 'backfill' };
    const from = Date.now();
    const jobs = Array.from({ length: 20 }, () => submit(history));
    await vi.advanceTimersByTimeAsync(20_000);
    await Promise.all(jobs);
    stop();
    const lastHistory = Math.max(...starts.filter((s) => s.priority === 'backfill').map((s) => s.startMs));
    const during = starts.filter((s) => s.startMs >= from && s.startMs <= lastHistory);
    // Never more than N - 1 live starts in a row while backfill waits (one more handed out before).
    let run = 0;
    let longest = 0;
    for (const s of during) {
      run = s.priority === 'live' ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThanOrEqual(N);
    // …and live still goes first: backfill gets its share, not more.
    expect(during.length).toBeGreaterThanOrEqual(N * 20 - 1);
    expect(during.length).toBeLessThanOrEqual(N * 20 + 1);
    await vi.advanceTimersByTimeAsync(1_000);
    await scheduler.close();
  });

  it('gives backfill every start live work leaves (work-conserving)', async () => {
    const limits = planLimits('premium');
    const { scheduler, starts, submit, saturate, stop } = harness(limits);
    // A live poller that wants one request a second, and a backfill that wants everything.
    let polling = true;
    const poll = async (): Promise<void> => {
      while (polling) {
        await submit({ sourceId: 'suspensions', endpoint: 'static-info', priority: 'live' });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    const poller = poll();
    saturate({ sourceId: 'history', endpoint: 'kline', priority: 'backfill' }, 4);
    await vi.advanceTimersByTimeAsync(10_000);
    stop();
    polling = false;
    const during = starts.filter((s) => s.startMs < T0 + 10_000);
    // The plan's rate (10 per 1025 ms plus 3 ms round trips) is used in full, and the poller was never late.
    expect(during.length).toBeGreaterThanOrEqual(96);
    expect(worstWindows(limits, during).combined).toBe(10);
    const polls = during.filter((s) => s.sourceId === 'suspensions');
    for (const p of polls) expect(p.startMs - p.enqueuedAtMs).toBeLessThanOrEqual(110);
    await vi.advanceTimersByTimeAsync(2_000);
    await poller;
    await scheduler.close();
  });

  it.each([
    { plan: 'premium', priority: 'live' },
    { plan: 'professional', priority: 'backfill' },
  ] as const)(
    'gives a lone $priority source on $plan every start the plan allows',
    async ({ plan, priority }) => {
      const limits = planLimits(plan);
      const { scheduler, starts, saturate, stop } = harness(limits);
      saturate({ sourceId: 'alone', endpoint: 'kline', priority }, 4);
      await vi.advanceTimersByTimeAsync(10_250);
      stop();
      const combined = limits.rules.find((r) => r.id === 'combined')!;
      // Ten windows of 1025 ms (+ 3 ms round trips): ten times the combined limit, less one window's slack.
      expect(starts.length).toBeGreaterThanOrEqual(9 * combined.limit);
      expect(worstWindows(limits, starts).combined).toBe(combined.limit);
      await vi.advanceTimersByTimeAsync(1_000);
      await scheduler.close();
    },
  );

  it('reports per source the starts by endpoint and priority, the recent share and the waits', async () => {
    const limits = planLimits('basic'); // one request per 1025 ms
    const { scheduler, submit } = harness(limits);
    const jobs = [
      submit(depth),
      submit(depth),
      submit({ sourceId: 'history', endpoint: 'kline', priority: 'backfill' }),
      submit({ sourceId: 'history', endpoint: 'kline', priority: 'live' }),
    ];
    await vi.advanceTimersByTimeAsync(10);
    let s = scheduler.stats();
    expect(s.sourceShareWindowMs).toBe(60_000);
    expect(s.sources.map((x) => [x.sourceId, x.queued, x.inFlight, x.granted])).toEqual([
      ['depth-capture', 1, 0, 1],
      ['history', 2, 0, 0],
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(jobs);
    s = scheduler.stats();
    const [d, h] = s.sources;
    // Live round-robin: depth at 0, history (live) at 1025, depth at 2050, then the backfill job.
    expect(d).toMatchObject({ sourceId: 'depth-capture', granted: 2, recentGranted: 2, recentShare: 0.5 });
    expect(d!.requests).toEqual([{ endpoint: 'depth-tick', priority: 'live', granted: 2 }]);
    expect(h!.requests).toEqual(
      expect.arrayContaining([
        { endpoint: 'kline', priority: 'live', granted: 1 },
        { endpoint: 'kline', priority: 'backfill', granted: 1 },
      ]),
    );
    expect(d!.wait.count).toBe(2);
    expect(d!.wait.maxMs).toBeGreaterThanOrEqual(2_050);
    expect(d!.wait.maxMs).toBeLessThan(2_050 + 50);
    // Cumulative buckets: the immediate start in the first, the other one by 2.5 s; the sums add up.
    const byLe = new Map(d!.wait.buckets.map((b) => [b.leMs, b]));
    expect(byLe.get(10)!.count).toBe(1);
    expect(byLe.get(1_000)!.count).toBe(1);
    expect(byLe.get(2_500)!.count).toBe(2);
    expect(d!.wait.buckets.at(-1)).toEqual({
      leMs: Number.POSITIVE_INFINITY,
      count: 2,
      sumMs: d!.wait.sumMs,
    });
    // The share is of the starts within the last minute: gone a minute later.
    await vi.advanceTimersByTimeAsync(60_000);
    s = scheduler.stats();
    expect(s.sources.map((x) => [x.recentGranted, x.recentShare, x.granted])).toEqual([
      [0, 0, 2],
      [0, 0, 2],
    ]);
    await scheduler.close();
  });

  it('refuses a backfill share outside (0, 0.5]', () => {
    for (const backfillShare of [0, -0.1, 0.6, Number.NaN])
      expect(() => new PlanScheduler(planLimits('basic'), { backfillShare })).toThrow(/"backfillShare"/);
  });
});

// --- property: random sources on random plans ----------------------------------------------------

/**
 * The documented bound (see FairShares in internal/fair-shares.ts, "Bound") for a source whose
 * next job its endpoint's own rules allow: live, the starts of other sources before its next start
 * (`E` = endpoints backfill waits on); backfill, the live starts before it, or the live starts
 * on its endpoint when live work uses that endpoint too (`shared`).
 */
function starvationBound(priority: Priority, n: number, backfillEndpoints: number, shared: boolean): number {
  if (priority === 'backfill') return (shared ? 2 : 1) * (N - 1) * n;
  return n - 1 + 1 + backfillEndpoints + 2 * Math.floor((n - 1) / (N - 1));
}

/** Endpoints whose own rules are never stricter than the combined rule (allowed whenever it allows). */
const COMBINED_BOUND: readonly EndpointKind[] = ['kline', 'depth-tick', 'static-info'];

const sourceArb = fc.record({
  priority: fc.constantFrom<Priority>('live', 'backfill'),
  endpoint: fc.constantFrom<EndpointKind>('kline', 'depth-tick', 'static-info', 'batch-kline'),
  pattern: fc.oneof(
    // A poller or a pager that always wants more: `depth` jobs outstanding from `fromMs` to `toMs`.
    fc.record({
      kind: fc.constant('saturating' as const),
      depth: fc.integer({ min: 1, max: 3 }),
      fromMs: fc.integer({ min: 0, max: 8_000 }),
      toMs: fc.integer({ min: 8_000, max: 16_000 }),
    }),
    // Bursts of jobs queued at once.
    fc.record({
      kind: fc.constant('bursts' as const),
      bursts: fc.array(
        fc.record({ atMs: fc.integer({ min: 0, max: 16_000 }), count: fc.integer({ min: 1, max: 8 }) }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  ),
});

const runArb = fc.record({
  plan: fc.constantFrom('basic', 'premium', 'professional' as const),
  latency: fc.constantFrom([1, 5], [20, 80], [50, 300]),
  sources: fc.array(sourceArb, { minLength: 1, maxLength: 5 }),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 2 }),
});

/**
 * Every rule checked by brute force, twice: the scheduler's own discipline (starts, windows widened
 * by the margin; the checker of test/scheduler-properties.test.ts, private to that file) and the
 * service's view with adversarial arrivals (each earlier request as late as its answer, this one
 * as early as its start; nominal windows).
 */
function violations(limits: PlanLimits, starts: readonly Start[]): string[] {
  const problems: string[] = [];
  for (const rule of limits.rules) {
    const counted = starts.filter((s) => rule.scope === 'all' || rule.scope === s.endpoint);
    for (const j of counted) {
      const widened = counted.filter(
        (i) => i.startMs >= j.startMs && i.startMs < j.startMs + rule.windowMs + MARGIN_MS,
      ).length;
      if (widened > rule.limit) problems.push(`${rule.id}: ${widened} starts from ${j.startMs - T0}`);
      const arrived = counted.filter(
        (i) => i !== j && i.startMs <= j.startMs && i.settleMs > j.startMs - rule.windowMs,
      ).length;
      if (arrived + 1 > rule.limit) problems.push(`${rule.id}: ${arrived + 1} arrivals by ${j.startMs - T0}`);
    }
  }
  if (starts.length > limits.perDay) problems.push(`day: ${starts.length} > ${limits.perDay}`);
  return problems;
}

/**
 * The longest service gaps of each source: for every moment it had work queued (a job queued into
 * an empty queue, or one of its starts with more queued), the starts of other sources (`counts`)
 * before its next start, and the time until it.
 */
function serviceGaps(
  enqueued: readonly { sourceId: string; atMs: number }[],
  starts: readonly Start[],
  counts: (id: string, start: Start) => boolean,
): Map<string, { others: number; ms: number }> {
  const gaps = new Map<string, { others: number; ms: number }>();
  const ids = new Set(enqueued.map((e) => e.sourceId));
  for (const id of ids) {
    const events = [
      ...enqueued.filter((e) => e.sourceId === id).map((e) => ({ t: e.atMs, d: 1 })),
      ...starts.filter((s) => s.sourceId === id).map((s) => ({ t: s.startMs, d: -1 })),
    ].sort((a, b) => a.t - b.t || b.d - a.d);
    let queued = 0;
    const worst = { others: 0, ms: 0 };
    for (const e of events) {
      queued += e.d;
      const opens = (e.d === 1 && queued === 1) || (e.d === -1 && queued > 0);
      if (!opens) continue;
      const next = starts.find(
        (s) => s.sourceId === id && s.startMs >= e.t && !(e.d === -1 && s.startMs === e.t),
      );
      const until = next?.startMs ?? Number.POSITIVE_INFINITY;
      const others = starts.filter(
        (s) => s.sourceId !== id && counts(id, s) && s.startMs > e.t && s.startMs < until,
      ).length;
      worst.others = Math.max(worst.others, others);
      worst.ms = Math.max(worst.ms, until - e.t);
    }
    gaps.set(id, worst);
  }
  return gaps;
}

describe('PlanScheduler fair shares under random sources (virtual clock)', () => {
  it('keeps every rule and serves every source with queued work within its bound', async () => {
    /** The largest observed gap over its bound, per kind of source. */
    const worst: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(runArb, async (run) => {
        vi.useFakeTimers({ now: T0 }); // a fresh virtual clock per run
        const limits = planLimits(run.plan);
        let seed = run.seed;
        const [lo, hi] = run.latency as [number, number];
        const latency = () => lo + ((seed = (seed * 16807) % 2147483647) % (hi - lo + 1));
        const h = harness(limits, {}, latency);
        const specs = run.sources.map((s, i) => ({
          ...s,
          source: { sourceId: `s${i}`, endpoint: s.endpoint, priority: s.priority },
        }));
        const pending: Promise<unknown>[] = [];
        const stops: (() => void)[] = [];
        for (const s of specs) {
          if (s.pattern.kind === 'bursts') {
            for (const b of s.pattern.bursts)
              setTimeout(() => {
                for (let i = 0; i < b.count; i++) pending.push(h.submit(s.source));
              }, b.atMs);
            continue;
          }
          const { depth, fromMs, toMs } = s.pattern;
          let open = true;
          stops.push(() => (open = false));
          setTimeout(() => {
            const loop = (): void => {
              if (open && Date.now() < T0 + toMs) pending.push(h.submit(s.source).then(loop));
            };
            for (let i = 0; i < depth; i++) loop();
          }, fromMs);
        }
        // Run the virtual clock until every arrival happened and every job settled.
        await vi.advanceTimersByTimeAsync(16_000);
        for (let i = 0; i < 100 && h.outstanding() > 0; i++) await vi.advanceTimersByTimeAsync(10_000);
        const unsettled = h.outstanding();
        stops.forEach((stop) => stop());
        await h.scheduler.close();
        await Promise.allSettled(pending);
        vi.useRealTimers();
        expect(unsettled, 'jobs never started').toBe(0);

        expect(violations(limits, h.starts)).toEqual([]);
        const specOf = new Map(specs.map((s) => [s.source.sourceId, s]));
        const liveOn = (e: EndpointKind) => specs.some((s) => s.priority === 'live' && s.endpoint === e);
        // Live sources count every other start; backfill ones the live starts (on their endpoint if
        // live work uses it too).
        const gaps = serviceGaps(h.enqueued, h.starts, (id, start) => {
          const spec = specOf.get(id)!;
          if (spec.priority === 'live') return true;
          return start.priority === 'live' && (!liveOn(spec.endpoint) || start.endpoint === spec.endpoint);
        });
        const count = (p: Priority) => specs.filter((s) => s.priority === p).length;
        const backfillEndpoints = new Set(
          specs.filter((s) => s.priority === 'backfill').map((s) => s.endpoint),
        ).size;
        const combined = limits.rules.find((r) => r.id === 'combined')!;
        const batch = limits.rules.find((r) => r.id === 'batch-kline-interval')!;
        for (const s of specs) {
          const n = count(s.priority);
          // The documented bound, plus the two jobs that may already be handed out when it became ready.
          const others = starvationBound(s.priority, n, backfillEndpoints, liveOn(s.endpoint)) + 2;
          const gap = gaps.get(s.source.sourceId);
          if (gap === undefined) continue; // never queued anything
          if (COMBINED_BOUND.includes(s.endpoint)) {
            expect(gap.others, `${s.source.sourceId} (${s.priority} ${s.endpoint})`).toBeLessThanOrEqual(
              others,
            );
            const key = `${s.priority}, starts of others`;
            worst[key] = Math.max(worst[key] ?? 0, gap.others / others);
            continue;
          }
          // /batch-kline opens once per interval (after the previous answer), and each opening goes to
          // one of its sources, least recently served first (backfill owed one in N): at most `others`
          // openings come first, each followed by at most the time `others` starts take.
          const openingMs = batch.windowMs + MARGIN_MS + hi;
          const startsMs = Math.ceil((others + 1) / combined.limit) * (combined.windowMs + MARGIN_MS + hi);
          const boundMs = others * (openingMs + startsMs);
          expect(gap.ms, `${s.source.sourceId} (${s.priority} batch-kline)`).toBeLessThanOrEqual(boundMs);
          const key = `${s.priority} /batch-kline, ms`;
          worst[key] = Math.max(worst[key] ?? 0, gap.ms / boundMs);
        }
      }),
      { numRuns: 60 },
    );
    console.info(
      `fair shares, worst service gap over its bound: ${Object.entries(worst)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join('; ')}`,
    );
  }, 300_000);
});
