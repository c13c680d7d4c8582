// Property tests of the plan scheduler on a virtual clock: random workloads (endpoints,
// priorities, sources, arrival times, aborts, rate-limit reports) on all seven plans, every start
// recorded and checked by an independent brute-force checker.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ENDPOINT_KINDS,
  PLANS,
  PlanScheduler,
  planLimits,
  type EndpointKind,
  type PlanLimits,
  type Priority,
} from '../packages/core/src/index.js';
import { sustainedRate, zonedToUtcMs } from '../packages/core/src/internal.js';

afterEach(() => {
  vi.useRealTimers();
});

interface JobSpec {
  readonly atMs: number;
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
  readonly sourceId: string;
  readonly abortAfterMs: number | undefined;
  readonly latencyMs: number;
  readonly fails: boolean;
}

interface Outcome {
  readonly spec: JobSpec;
  readonly submittedAtMs: number;
  startedAtMs: number | undefined;
  startIndex: number | undefined;
  abortedAtMs: number | undefined;
  settled: 'resolved' | 'rejected' | undefined;
  reason: unknown;
}

const jobArb = (horizonMs: number) =>
  fc.record({
    atMs: fc.integer({ min: 0, max: horizonMs }),
    endpoint: fc.constantFrom(...ENDPOINT_KINDS),
    priority: fc.constantFrom<Priority>('live', 'backfill'),
    sourceId: fc.constantFrom('s0', 's1', 's2', 's3'),
    // One job in five gets aborted at some point (queued or already started).
    abortAfterMs: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 20_000 }) },
    ),
    latencyMs: fc.integer({ min: 0, max: 1_500 }),
    fails: fc.boolean(),
  });

const TZ = 'Asia/Shanghai';
const MIDNIGHT = zonedToUtcMs(TZ, 2026, 3, 10);

/** Independent day key: the calendar date of `ms` in `timeZone` as Intl formats it. */
const dayFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: TZ,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** Every window of every rule, checked by brute force over the recorded starts. */
function windowViolations(
  limits: PlanLimits,
  marginMs: number,
  starts: readonly { t: number; endpoint: EndpointKind }[],
): string[] {
  const problems: string[] = [];
  for (const rule of limits.rules) {
    const times = starts.filter((s) => rule.scope === 'all' || rule.scope === s.endpoint).map((s) => s.t);
    for (const t of times) {
      const inWindow = times.filter((u) => u >= t && u < t + rule.windowMs + marginMs).length;
      if (inWindow > rule.limit)
        problems.push(`${rule.id}: ${inWindow} starts in [${t}, +${rule.windowMs + marginMs})`);
    }
  }
  const perDay = new Map<string, number>();
  for (const s of starts) {
    // Attribute each start to the day it left in and the day it may arrive in (margin later).
    for (const key of new Set([dayFormat.format(s.t), dayFormat.format(s.t + marginMs)])) {
      perDay.set(key, (perDay.get(key) ?? 0) + 1);
    }
  }
  for (const [day, n] of perDay)
    if (n > limits.perDay) problems.push(`day ${day}: ${n} starts > ${limits.perDay}`);
  return problems;
}

/** Would one more start of `endpoint` at `t` (after `before`) keep every rule and the day? */
function couldStart(
  limits: PlanLimits,
  marginMs: number,
  before: readonly { t: number; endpoint: EndpointKind }[],
  endpoint: EndpointKind,
  t: number,
): boolean {
  return windowViolations(limits, marginMs, [...before, { t, endpoint }]).length === 0;
}

async function runWorkload(options: {
  limits: PlanLimits;
  marginMs: number;
  smoothing?: number;
  startMs: number;
  jobs: readonly JobSpec[];
  reports: readonly { atMs: number; endpoint: EndpointKind }[];
}) {
  vi.useFakeTimers({ now: options.startMs });
  const scheduler = new PlanScheduler(options.limits, {
    marginMs: options.marginMs,
    smoothing: options.smoothing ?? 0.5,
    dailyResetTimeZone: TZ,
    maxInFlight: Number.POSITIVE_INFINITY,
    rateLimitBackoffMs: 1_000,
    rateLimitMaxBackoffMs: 8_000,
    recoveryMs: 2_000,
  });
  const outcomes: Outcome[] = [];
  const starts: { t: number; endpoint: EndpointKind; outcome: Outcome }[] = [];
  for (const spec of options.jobs) {
    setTimeout(() => {
      const controller = new AbortController();
      const outcome: Outcome = {
        spec,
        submittedAtMs: Date.now(),
        startedAtMs: undefined,
        startIndex: undefined,
        abortedAtMs: undefined,
        settled: undefined,
        reason: undefined,
      };
      outcomes.push(outcome);
      if (spec.abortAfterMs !== undefined) {
        setTimeout(() => {
          outcome.abortedAtMs = Date.now();
          controller.abort(new Error(`abort ${outcomes.indexOf(outcome)}`));
        }, spec.abortAfterMs);
      }
      scheduler
        .schedule(
          {
            endpoint: spec.endpoint,
            priority: spec.priority,
            sourceId: spec.sourceId,
            signal: controller.signal,
          },
          () => {
            outcome.startedAtMs = Date.now();
            outcome.startIndex = starts.length;
            starts.push({ t: Date.now(), endpoint: spec.endpoint, outcome });
            return new Promise((resolve, reject) =>
              setTimeout(
                () => (spec.fails ? reject(new Error('send failed')) : resolve('ok')),
                spec.latencyMs,
              ),
            );
          },
        )
        .then(
          () => void (outcome.settled = 'resolved'),
          (reason: unknown) => {
            outcome.settled = 'rejected';
            outcome.reason = reason;
          },
        );
    }, spec.atMs);
  }
  for (const report of options.reports)
    setTimeout(() => scheduler.reportRateLimited(report.endpoint), report.atMs);
  // Run the virtual clock, timer to timer, until every job settled (a full day may have to pass).
  for (
    let i = 0;
    i < 200_000 && (outcomes.length < options.jobs.length || outcomes.some((o) => o.settled === undefined));
    i++
  ) {
    await vi.advanceTimersToNextTimerAsync();
  }
  const stats = scheduler.stats();
  if (process.env.QF_DEBUG)
    console.log(
      'loop done',
      outcomes.length,
      options.jobs.length,
      outcomes.filter((o) => o.settled === undefined).length,
      JSON.stringify(stats.queued),
      stats.inFlight,
    );
  const closed = scheduler.close();
  await vi.advanceTimersByTimeAsync(1_000);
  await closed;
  if (process.env.QF_DEBUG) console.log('closed');
  vi.useRealTimers();
  return { outcomes, starts, stats };
}

const workloadArb = fc.record({
  plan: fc.constantFrom(...PLANS),
  marginMs: fc.integer({ min: 0, max: 40 }),
  smoothing: fc.constantFrom(0, 0.25, 0.5, 1),
  // Sometimes a tiny daily total, and a start just before midnight, so the reset is exercised.
  perDay: fc.option(fc.integer({ min: 3, max: 12 }), { nil: undefined }),
  beforeMidnightMs: fc.integer({ min: 0, max: 90_000 }),
  jobs: fc.array(jobArb(60_000), { minLength: 1, maxLength: 45 }),
});

describe('PlanScheduler under random workloads (virtual clock)', () => {
  it('never exceeds any window of any rule or any calendar day, and starts every job that was not aborted first', async () => {
    await fc.assert(
      fc.asyncProperty(
        workloadArb,
        fc.array(
          fc.record({
            atMs: fc.integer({ min: 0, max: 60_000 }),
            endpoint: fc.constantFrom(...ENDPOINT_KINDS),
          }),
          { maxLength: 4 },
        ),
        async (w, reports) => {
          const limits = { ...planLimits(w.plan), ...(w.perDay === undefined ? {} : { perDay: w.perDay }) };
          const { outcomes, starts } = await runWorkload({
            limits,
            marginMs: w.marginMs,
            smoothing: w.smoothing,
            startMs: MIDNIGHT - w.beforeMidnightMs,
            jobs: w.jobs,
            reports,
          });
          expect(windowViolations(limits, w.marginMs + Number(process.env.QF_MUTATE ?? 0), starts)).toEqual(
            [],
          );
          expect(outcomes.length).toBe(w.jobs.length);
          for (const o of outcomes) {
            expect(o.settled).toBeDefined();
            const abortedWhileQueued =
              o.abortedAtMs !== undefined && (o.startedAtMs === undefined || o.startedAtMs > o.abortedAtMs);
            if (abortedWhileQueued) {
              // Removed from the queue: never started, rejected with the signal's reason.
              expect(o.startedAtMs).toBeUndefined();
              expect(String((o.reason as Error).message)).toMatch(/^abort /);
            } else {
              expect(o.startedAtMs).toBeDefined(); // liveness
              expect(o.settled).toBe(o.spec.fails ? 'rejected' : 'resolved');
            }
          }
          // No start while the first rate-limit pause lasts.
          const first = [...reports].sort((a, b) => a.atMs - b.atMs)[0];
          if (first !== undefined) {
            const at = MIDNIGHT - w.beforeMidnightMs + first.atMs;
            expect(starts.filter((s) => s.t > at && s.t < at + 1_000)).toEqual([]);
          }
        },
      ),
      { numRuns: 100 },
    );
  }, 300_000);

  it('lets a backfill job go before a waiting live job that could start only for the starts owed to backfill (one in five)', async () => {
    await fc.assert(
      fc.asyncProperty(workloadArb, async (w) => {
        const limits = { ...planLimits(w.plan), ...(w.perDay === undefined ? {} : { perDay: w.perDay }) };
        const { outcomes, starts } = await runWorkload({
          limits,
          marginMs: w.marginMs,
          smoothing: w.smoothing,
          startMs: MIDNIGHT - w.beforeMidnightMs,
          jobs: w.jobs,
          reports: [],
        });
        // Live goes first, but backfill is owed one start in every five while it waits
        // (PLAN_SCHEDULER_DEFAULTS.backfillShare 0.2), so it always progresses.
        let jumps = 0;
        for (const [index, b] of starts.entries()) {
          if (b.outcome.spec.priority !== 'backfill') continue;
          const before = starts.slice(0, index);
          const jumped = outcomes.some(
            (live) =>
              live.spec.priority === 'live' &&
              live.submittedAtMs < b.t &&
              (live.startIndex === undefined || live.startIndex > index) &&
              (live.abortedAtMs === undefined || live.abortedAtMs > b.t) &&
              couldStart(limits, w.marginMs, before, live.spec.endpoint, b.t),
          );
          if (jumped) jumps++;
        }
        expect(
          jumps,
          `backfill went before waiting live jobs ${jumps} times in ${starts.length} starts`,
        ).toBeLessThanOrEqual(Math.ceil(starts.length / 5) + 1);
      }),
      { numRuns: 40 },
    );
  }, 300_000);

  // Requests count until they settle (countFrom 'settle'), so each window costs one round trip
  // more: the ceiling is windowMs / (windowMs + margin + latency). Against a local simulator the
  // round trip is a few ms (>= 0.95 of the binding rule); a slow link lowers the ceiling, never safety.
  it.each([
    { latencyMs: 10, floor: 0.95 },
    { latencyMs: 150, floor: 0.95 * (1000 / (1000 + 25 + 150)) },
  ])(
    'reaches $floor of the binding rule on a long kline backfill with $latencyMs ms round trips',
    async ({ latencyMs, floor }) => {
      for (const plan of ['premium', 'professional'] as const) {
        const limits = planLimits(plan);
        const n = Math.round(sustainedRate(limits, 'kline') * 120); // two minutes of backlog
        const jobs: JobSpec[] = Array.from({ length: n }, (_, i) => ({
          atMs: 0,
          endpoint: 'kline',
          priority: 'backfill',
          sourceId: `s${i % 7}`,
          abortAfterMs: undefined,
          latencyMs,
          fails: false,
        }));
        const { starts } = await runWorkload({
          limits,
          marginMs: 25,
          startMs: MIDNIGHT - 3_600_000,
          jobs,
          reports: [],
        });
        expect(windowViolations(limits, 25, starts)).toEqual([]);
        // Achieved rate in the saturated regime: the last k whole windows' worth of starts (k × limit
        // of the binding rule) over the time they took, against the binding rule's rate.
        const rate = sustainedRate(limits, 'kline');
        const limit = limits.rules.find((r) => r.id === 'combined')!.limit;
        const k = Math.floor((starts.length - 1) / limit);
        const last = starts[starts.length - 1]!.t;
        const spanS = (last - starts[starts.length - 1 - k * limit]!.t) / 1000;
        const utilisation = (k * limit) / spanS / rate;
        console.info(
          `scheduler utilisation, ${plan} kline backfill of ${n} jobs, ${latencyMs} ms round trips (virtual clock): ${utilisation.toFixed(4)}`,
        );
        expect(utilisation).toBeGreaterThanOrEqual(floor);
        expect(utilisation).toBeLessThanOrEqual(1);
      }
    },
    300_000,
  );
});
