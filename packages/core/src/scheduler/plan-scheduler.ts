import Bottleneck from 'bottleneck';
import { ENDPOINT_KINDS, type EndpointKind, type PlanLimits } from '../plans.js';
import {
  PRIORITIES,
  type Priority,
  type RequestScheduler,
  type ScheduledRequest,
} from '../request-scheduler.js';
import { BackfillFloor } from './internal/backfill-floor.js';
import { FairQueue, type FairQueueItem } from './internal/fair-queue.js';
import { PlanWindows } from './internal/plan-windows.js';
import { SourceLedger } from './internal/source-ledger.js';
import { MemoryWindowStore } from './memory-window-store.js';
import { systemClock, type Clock } from '../clock.js';
import { InvalidOptionError, QuoteflowError } from '../errors.js';
import type { StartTicket, WindowSpec, WindowStore } from './window-store.js';
import type { PlanSchedulerStats, WaitStats } from './plan-scheduler-stats.js';

export type {
  PlanSchedulerStats,
  RuleStats,
  SourceRequestStats,
  SourceStats,
  SourceWaitStats,
  WaitBucket,
  WaitStats,
} from './plan-scheduler-stats.js';

/** Options of {@link PlanScheduler}; every field has a default in {@link PLAN_SCHEDULER_DEFAULTS}. */
export interface PlanSchedulerOptions {
  /**
   * Safety margin added to every window, in ms: starts are spaced as if each window were this much
   * longer, so a request whose predecessor was delayed by up to this much in the network still
   * cannot arrive too close to it.
   */
  readonly marginMs?: number;
  /**
   * The instant a request counts at in the plan's windows. The service counts arrival times, and a
   * request arrives between its send and its answer: `'settle'` counts it until its answer came
   * back, so no network delay can ever make two requests arrive too close (safe by construction;
   * costs round-trip time per window: utilisation `windowMs / (windowMs + margin + round trip)`).
   * `'start'` counts send times and relies on `marginMs` alone to cover jitter (faster on a slow
   * link, but a delay beyond the margin can draw a refusal).
   */
  readonly countFrom?: 'settle' | 'start';
  /** IANA time zone whose midnight resets the daily total. */
  readonly dailyResetTimeZone?: string;
  /** Requests in flight at once (started, not yet settled); `Infinity` for no cap. */
  readonly maxInFlight?: number;
  /** First pause after the service answers "rate limit", in ms; doubles per repeated report. */
  readonly rateLimitBackoffMs?: number;
  /** Longest pause after repeated "rate limit" answers, in ms. */
  readonly rateLimitMaxBackoffMs?: number;
  /**
   * After a pause, starts are paced at half the sustained rate for this long, then at the
   * sustained rate for as long again, so a backlog never leaves in a burst. A report during that
   * time doubles the next pause.
   */
  readonly recoveryMs?: number;
  /**
   * Fraction of a rule's even spacing (`(windowMs + marginMs) / limit`) kept between two starts
   * that rule counts: 0 lets a whole window's limit start in one instant, 1 paces starts evenly.
   * It does not change the sustained rate, only how bursts leave.
   */
  readonly smoothing?: number;
  /**
   * Fraction of starts reserved for `'backfill'` while it has work queued, from 0 (exclusive) to
   * 0.5: live work goes first, but at least one start in every `ceil(1 / backfillShare)` goes to
   * backfill as soon as a backfill job can start. Backfill also takes every start live work leaves.
   */
  readonly backfillShare?: number;
  /** Time source and timers (virtual in tests). */
  readonly clock?: Clock;
  /** Where the start-time logs live (in process by default; shared across processes later). */
  readonly store?: WindowStore;
}

/**
 * Defaults of {@link PlanSchedulerOptions}.
 *
 * - `marginMs: 25`: jitter between two requests on one keep-alive connection is a few ms on a LAN
 *   and rarely above 10 ms across a region; 25 ms covers that plus timer lateness and still leaves
 *   the binding 1 s rules at 1000 / 1025 = 0.976 of the allowed rate (target >= 0.95).
 * - `dailyResetTimeZone: 'Asia/Shanghai'`: the provider counts days in China time (its ret codes,
 *   A-share focus and Shanghai suspension source point there), and the zone has no DST, so every
 *   day is exactly 24 h. Set it to the zone your provider account states.
 * - `smoothing: 0.5`: a burst of a plan's whole per-second limit leaves over half a second instead
 *   of in one instant. Requests that leave together queue together (in the event loop, the
 *   connection pool, the network), and the last of a burst can arrive later than the margin
 *   covers; measured against the simulator, an unspread premium burst of 10 arrived over 680 ms.
 * - `countFrom: 'settle'`: never over the plan, whatever the network does (see the option).
 * - `maxInFlight: 32`: far above what any plan needs (20/s × a 1 s response), but bounds sockets
 *   and memory if the service stalls.
 * - `backfillShare: 0.2` (1 start in 5): a history sync keeps moving at a fifth of the plan
 *   (about 2 requests/s on premium, one every 5 s on basic) beside a live poller that wants every
 *   request, and the poller keeps four fifths of its rate while the backfill lasts (its period
 *   grows by a quarter). Nothing is reserved while no backfill is queued.
 */
export const PLAN_SCHEDULER_DEFAULTS = {
  marginMs: 25,
  countFrom: 'settle',
  dailyResetTimeZone: 'Asia/Shanghai',
  maxInFlight: 32,
  rateLimitBackoffMs: 2_000,
  rateLimitMaxBackoffMs: 60_000,
  recoveryMs: 10_000,
  smoothing: 0.5,
  backfillShare: 0.2,
} as const;

/** The window of each source's share of recent starts in {@link PlanScheduler.stats}, in ms. */
const SOURCE_SHARE_WINDOW_MS = 60_000;

type JobState = 'queued' | 'dispatching' | 'started' | 'settled';

interface Job extends FairQueueItem {
  readonly priority: Priority;
  readonly signal: AbortSignal | undefined;
  readonly send: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly enqueuedAtMs: number;
  state: JobState;
  /** Chosen because backfill's reserved share was due (it does not give way to live work). */
  viaFloor: boolean;
  /** While handed out: the instant it was expected to start at. */
  plannedAtMs: number;
  onAbort: (() => void) | undefined;
  /** While handed out and waiting for its exact start instant: the timer and the run's end. */
  waiting: { handle: unknown; done: () => void } | undefined;
}

const DEFAULT_SOURCE = '';

/**
 * How early a job is handed to bottleneck before its start instant, in ms. Bottleneck's dispatch
 * takes a few timer turns (2-8 ms per job measured on a loaded 2-core machine); handing the job
 * over early hides that, while the exact start instant is kept by our own timer inside the job.
 */
const DISPATCH_LEAD_MS = 40;

/**
 * The plan scheduler: every request of one token goes through {@link PlanScheduler.schedule},
 * which starts `send` only when every sliding-window rule of the plan, the daily total (calendar
 * day of `dailyResetTimeZone`) and any rate-limit pause allow one more request arrival.
 *
 * - Limit safety comes from an exact gate over per-rule logs of start times ({@link WindowStore}):
 *   a job starts at the earliest instant every applicable rule allows, each window widened by
 *   `marginMs`, and the start is recorded atomically with the check.
 * - Order, between sources (`sourceId`): see "Fair shares" below.
 * - Queueing is lazy and cheap: jobs wait in an internal queue per priority; only the one job that
 *   may start now is handed to bottleneck, which runs it and caps requests in flight
 *   (`maxInFlight`). Ten thousand queued jobs are ten thousand small records and one timer.
 * - `reportRateLimited` pauses all starts with exponential backoff, then paces them (half rate,
 *   then full rate) so a backlog never leaves in a burst.
 *
 * Fair shares. Every request costs one start of the combined rules, which every endpoint shares,
 * so shares are counted in starts, across endpoints. The policy is hierarchical (priority, then
 * source) and work-conserving:
 *
 * 1. Between priorities, live goes first with a floor for backfill ({@link BackfillFloor}: deficit
 *    counters for the combined budget and for each endpoint's). While backfill has work waiting,
 *    one start in every `N = ceil(1 / backfillShare)` is owed to it, of all starts and of each
 *    endpoint's, and taken as soon as a backfill job can start, without giving way to live work;
 *    but on an endpoint live work waits for too, backfill never takes more than 1 in `N` of its
 *    starts (so a live `/batch-kline` poller keeps 4 of 5 openings beside a `/batch-kline`
 *    backfill). Otherwise a backfill job starts only when no live job could use the slot now or
 *    would start later because of it, so backfill also gets every start live work leaves (extras,
 *    which owe nothing back). A floor rather than weights: live work keeps its latency whatever
 *    the number of backfill series, and pays at most `1 / N` of its rate while a backfill lasts.
 * 2. Within a priority, least recently served source first among those whose next job may start
 *    now ({@link FairQueue}), then that source's least recently served endpoint: round-robin in
 *    which a source blocked by its own endpoint's rules keeps its turn for when the endpoint opens.
 *    A source that wants less leaves the rest to the others; one that was idle earns nothing.
 *
 * Bound: while a source has a job queued that its endpoint's own rules allow (the shared combined,
 * per-minute and daily rules aside), and `n` sources of its priority have work queued:
 * - live: at most `n - 1` starts of other live sources come before its next start, plus the
 *   starts owed to backfill meanwhile, at most `1 + E + 2 floor((n - 1) / (N - 1))` (`E` =
 *   endpoints backfill waits on);
 * - backfill: at most `(N - 1) × n` live starts come before its next start (backfill's combined
 *   share comes every `N` starts, least recently served source first), or, while live work also
 *   waits for its endpoint, at most `2 (N - 1) × n` live starts on that endpoint;
 * in both cases plus the one or two jobs already handed out (`DISPATCH_LEAD_MS`) when it became
 * ready. So a busy source gets at least `1 / n` of its priority's starts, backfill at least `1 / N`
 * of all starts (of its endpoint's, where live work competes for the same endpoint) while it has
 * work, and a `/depth-tick` poller cannot starve `/kline` or `/batch-kline` through the combined
 * rules; the plan's windows turn these counts into time (an endpoint that opens only now and
 * then, like `/batch-kline`, adds its interval per source ahead). A lone source gets every start
 * the plan allows.
 *
 * Use {@link sharedSchedulerFor} to get the one scheduler of a token; construct directly only in
 * tests or for a private quota.
 *
 * @example
 * ```ts
 * const scheduler = new PlanScheduler(planLimits('premium'));
 * const body = await scheduler.schedule({ endpoint: 'kline', priority: 'backfill', sourceId: 'AAPL.US' }, () =>
 *   fetch(url).then((r) => r.json()),
 * );
 * await scheduler.close();
 * ```
 */
export class PlanScheduler implements RequestScheduler, AsyncDisposable {
  readonly limits: PlanLimits;
  readonly options: Required<Omit<PlanSchedulerOptions, 'clock' | 'store'>>;
  private readonly clock: Clock;
  private readonly store: WindowStore;
  private readonly windows: PlanWindows;
  private readonly limiter: Bottleneck;
  private readonly queues: Record<Priority, FairQueue<Job>> = {
    live: new FairQueue(),
    backfill: new FairQueue(),
  };
  /** Jobs handed to bottleneck that have not started yet. */
  private readonly pending = new Set<Job>();
  private inFlight = 0;
  private wakeHandle: unknown;
  private wakeAtMs = Number.POSITIVE_INFINITY;
  private lastNowMs = Number.NEGATIVE_INFINITY;
  private pausedUntilMs = Number.NEGATIVE_INFINITY;
  private recoveringUntilMs = Number.NEGATIVE_INFINITY;
  private backoffLevel = 0;
  private rateLimitReports = 0;
  private readonly waits = {
    live: { started: 0, totalMs: 0, maxMs: 0 },
    backfill: { started: 0, totalMs: 0, maxMs: 0 },
  };
  private readonly startedPerEndpoint: Partial<Record<EndpointKind, number>> = {};
  private readonly floor: BackfillFloor;
  private readonly ledger = new SourceLedger(SOURCE_SHARE_WINDOW_MS);
  private closing: Promise<void> | undefined;

  /**
   * @param limits - the plan's limits (`planLimits(plan)`).
   * @param options - see {@link PlanSchedulerOptions}; defaults in {@link PLAN_SCHEDULER_DEFAULTS}.
   * @throws InvalidOptionError (`QF_INVALID_OPTION`) when an option or a limit is out of range.
   */
  constructor(limits: PlanLimits, options: PlanSchedulerOptions = {}) {
    this.limits = limits;
    this.options = {
      marginMs: options.marginMs ?? PLAN_SCHEDULER_DEFAULTS.marginMs,
      countFrom: options.countFrom ?? PLAN_SCHEDULER_DEFAULTS.countFrom,
      dailyResetTimeZone: options.dailyResetTimeZone ?? PLAN_SCHEDULER_DEFAULTS.dailyResetTimeZone,
      maxInFlight: options.maxInFlight ?? PLAN_SCHEDULER_DEFAULTS.maxInFlight,
      rateLimitBackoffMs: options.rateLimitBackoffMs ?? PLAN_SCHEDULER_DEFAULTS.rateLimitBackoffMs,
      rateLimitMaxBackoffMs: options.rateLimitMaxBackoffMs ?? PLAN_SCHEDULER_DEFAULTS.rateLimitMaxBackoffMs,
      recoveryMs: options.recoveryMs ?? PLAN_SCHEDULER_DEFAULTS.recoveryMs,
      smoothing: options.smoothing ?? PLAN_SCHEDULER_DEFAULTS.smoothing,
      backfillShare: options.backfillShare ?? PLAN_SCHEDULER_DEFAULTS.backfillShare,
    };
    validate(limits, this.options);
    this.floor = new BackfillFloor(this.options.backfillShare);
    this.clock = options.clock ?? systemClock;
    this.store = options.store ?? new MemoryWindowStore();
    this.windows = new PlanWindows(
      limits,
      this.options.marginMs,
      this.options.dailyResetTimeZone,
      this.options.smoothing,
      this.options.countFrom,
    );
    const maxInFlight = this.options.maxInFlight;
    this.limiter = new Bottleneck({ maxConcurrent: Number.isFinite(maxInFlight) ? maxInFlight : null });
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Runs `send` once every limit allows one more request of `request.endpoint`, and settles as
   * `send` settles. Rejects with the signal's reason when `request.signal` aborts while the job
   * is queued (a started `send` is not touched), and with a `QuoteflowError` `QF_CLOSED`
   * when the scheduler closes first.
   */
  schedule<T>(request: ScheduledRequest, send: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    if (!(ENDPOINT_KINDS as readonly string[]).includes(request.endpoint)) {
      return Promise.reject(new TypeError(`schedule: unknown endpoint ${JSON.stringify(request.endpoint)}`));
    }
    if (!(PRIORITIES as readonly string[]).includes(request.priority)) {
      return Promise.reject(new TypeError(`schedule: unknown priority ${JSON.stringify(request.priority)}`));
    }
    const signal = request.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        sourceId: request.sourceId ?? DEFAULT_SOURCE,
        endpoint: request.endpoint,
        priority: request.priority,
        signal,
        send,
        resolve: resolve as (value: unknown) => void,
        reject,
        enqueuedAtMs: this.now(),
        removed: false,
        taken: undefined,
        state: 'queued',
        viaFloor: false,
        plannedAtMs: Number.NaN,
        onAbort: undefined,
        waiting: undefined,
      };
      if (signal !== undefined) {
        job.onAbort = () => this.abort(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queues[job.priority].push(job);
      this.pump();
    });
  }

  /**
   * The service answered "rate limit" although every known rule held (another process on the
   * token, or a clock between us and it). Pauses every start for `rateLimitBackoffMs`, doubled for
   * each report that comes before the previous recovery ended (up to `rateLimitMaxBackoffMs`);
   * reports during a pause belong to the same episode. Afterwards starts are paced (no burst).
   */
  reportRateLimited(endpoint: EndpointKind): void {
    void endpoint; // One pause for every scope: a 429 does not say which rule the service applied.
    if (this.closed) return;
    const now = this.now();
    this.rateLimitReports++;
    if (now < this.pausedUntilMs) return;
    this.backoffLevel = now < this.recoveringUntilMs ? this.backoffLevel + 1 : 1;
    const pauseMs = Math.min(
      this.options.rateLimitMaxBackoffMs,
      this.options.rateLimitBackoffMs * 2 ** (this.backoffLevel - 1),
    );
    this.pausedUntilMs = now + pauseMs;
    this.recoveringUntilMs = this.pausedUntilMs + 2 * this.options.recoveryMs;
    this.cancelWake(); // the wake time moves
    this.pump();
  }

  /** A snapshot of queues, waits, rule windows, utilisation and what each source got. */
  stats(): PlanSchedulerStats {
    const now = this.now();
    const rules = this.limits.rules.map((rule) => {
      const spec: WindowSpec = {
        kind: 'sliding',
        key: `rule:${rule.id}`,
        windowMs: rule.windowMs,
        limit: rule.limit,
      };
      const startsInWindow = this.store.count(spec, now);
      return {
        id: rule.id,
        scope: rule.scope,
        windowMs: rule.windowMs,
        limit: rule.limit,
        startsInWindow,
        fill: startsInWindow / rule.limit,
      };
    });
    const day = this.windows.dayOf(now);
    const waitStats = (w: { started: number; totalMs: number; maxMs: number }): WaitStats => ({
      started: w.started,
      meanWaitMs: w.started === 0 ? 0 : w.totalMs / w.started,
      maxWaitMs: w.maxMs,
    });
    return {
      atMs: now,
      queued: { live: this.queues.live.size, backfill: this.queues.backfill.size },
      inFlight: this.inFlight,
      waits: { live: waitStats(this.waits.live), backfill: waitStats(this.waits.backfill) },
      startedPerEndpoint: { ...this.startedPerEndpoint },
      rules,
      day: { starts: this.store.count(day.spec, now), limit: this.limits.perDay, resetsAtMs: day.endMs },
      rateLimitReports: this.rateLimitReports,
      pausedUntilMs: now < this.pausedUntilMs ? this.pausedUntilMs : undefined,
      recoveringUntilMs: now < this.recoveringUntilMs ? this.recoveringUntilMs : undefined,
      utilisation: Math.max(0, ...rules.map((r) => r.fill)),
      sources: this.ledger.snapshot(now, (id) => this.queuedOf(id), [
        ...this.queues.live.busySources(),
        ...this.queues.backfill.busySources(),
      ]),
      sourceShareWindowMs: SOURCE_SHARE_WINDOW_MS,
    };
  }

  /**
   * Rejects every queued job with `QF_CLOSED`, refuses new ones, and resolves once the
   * requests in flight have settled. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.cancelWake();
    const error = closedError();
    const queued = [...this.queues.live.drain(), ...this.queues.backfill.drain()];
    queued.push(...this.pending);
    for (const job of queued) this.settle(job, () => job.reject(error));
    this.closing = this.limiter.stop({ dropWaitingJobs: true }).then(
      () => undefined,
      () => undefined,
    );
    return this.closing;
  }

  /** Same as {@link close}, for `await using scheduler = new PlanScheduler(...)`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The clock, never going backwards (a wall clock may be stepped back). */
  private now(): number {
    this.lastNowMs = Math.max(this.lastNowMs, this.clock.now());
    return this.lastNowMs;
  }

  private specsFor(endpoint: EndpointKind, now: number): WindowSpec[] {
    let paceMs: number | undefined;
    if (now < this.recoveringUntilMs) {
      const interval = this.windows.intervalMs(endpoint);
      paceMs = now < this.recoveringUntilMs - this.options.recoveryMs ? 2 * interval : interval;
    }
    return this.windows.specsFor(endpoint, now, paceMs);
  }

  /** Starts handed to bottleneck but not yet made, per window key, counted as if made now. */
  private pendingStarts(now: number): Map<string, number> {
    const extra = new Map<string, number>();
    for (const job of this.pending) {
      for (const spec of this.specsFor(job.endpoint, now))
        extra.set(spec.key, (extra.get(spec.key) ?? 0) + 1);
    }
    return extra;
  }

  /**
   * The earliest instant >= `fromMs` (default now) at which one more job of `endpoint` may start,
   * with `extra` starts counted as made at `fromMs`.
   */
  private earliestFor(
    endpoint: EndpointKind,
    now: number,
    extra?: ReadonlyMap<string, number>,
    fromMs = now,
  ): number {
    return Math.max(
      this.pausedUntilMs,
      this.store.earliestStart(this.specsFor(endpoint, now), fromMs, extra),
    );
  }

  /**
   * Whether a backfill start of `endpoint` must give way to live work: a live job (queued, or
   * handed out and not yet started) that may start by `now + horizonMs`, or one whose earliest
   * start a start of this job now would push later.
   */
  private yieldsToLive(
    endpoint: EndpointKind,
    now: number,
    horizonMs: number,
    extra: ReadonlyMap<string, number>,
    earliest: (e: EndpointKind) => number,
    fromMs = now,
  ): boolean {
    const liveEndpoints = new Set<EndpointKind>();
    for (const [liveEndpoint, count] of this.queues.live.perEndpoint)
      if (count > 0) liveEndpoints.add(liveEndpoint);
    for (const job of this.pending) if (job.priority === 'live') liveEndpoints.add(job.endpoint);
    let withThis: Map<string, number> | undefined;
    for (const liveEndpoint of liveEndpoints) {
      const base = earliest(liveEndpoint);
      if (base <= now + horizonMs) return true;
      if (withThis === undefined) {
        withThis = new Map(extra);
        for (const spec of this.specsFor(endpoint, now))
          withThis.set(spec.key, (withThis.get(spec.key) ?? 0) + 1);
      }
      if (this.earliestFor(liveEndpoint, now, withThis, fromMs) > base) return true;
    }
    return false;
  }

  /**
   * Hands out every job that may start within {@link DISPATCH_LEAD_MS} (counting those handed out
   * and not started yet as if they started now), then arms one timer for the next.
   */
  private pump(): void {
    while (!this.closed && this.inFlight + this.pending.size < this.options.maxInFlight) {
      const now = this.now();
      const next = this.pick(now);
      if (typeof next === 'number') {
        this.armWake(next - DISPATCH_LEAD_MS, now);
        return;
      }
      this.dispatch(next);
    }
  }

  /**
   * The next job that may start soon, or the earliest instant one may: backfill when its reserved
   * share is due, else live, else backfill that delays no live work (see the class's "Fair shares").
   */
  private pick(now: number): Job | number {
    const extra = this.pendingStarts(now);
    // Jobs handed out start one after another: count them as made at the last one's instant, not
    // now, or a spacing rule (limit 1) would let a whole burst be handed out at once, in an order
    // fixed before later arrivals from other sources are looked at.
    let fromMs = now;
    for (const job of this.pending) fromMs = Math.max(fromMs, job.plannedAtMs);
    const cache = new Map<EndpointKind, number>();
    const earliest = (endpoint: EndpointKind): number => {
      let t = cache.get(endpoint);
      if (t === undefined) cache.set(endpoint, (t = this.earliestFor(endpoint, now, extra, fromMs)));
      return t;
    };
    const soon = now + DISPATCH_LEAD_MS;
    let wakeAt = Number.POSITIVE_INFINITY;
    /** The fair choice among the jobs of `priority` that may start soon on an endpoint `allowed` lets through. */
    const choose = (priority: Priority, allowed: (endpoint: EndpointKind) => boolean): Job | undefined => {
      const queue = this.queues[priority];
      if (queue.size === 0) return undefined;
      // Decide per endpoint first (at most five), so a long blocked queue is never walked.
      const ready = new Set<EndpointKind>();
      for (const [endpoint, count] of queue.perEndpoint) {
        if (count <= 0) continue;
        const t = earliest(endpoint);
        if (t > soon) wakeAt = Math.min(wakeAt, t);
        else if (allowed(endpoint)) ready.add(endpoint);
      }
      if (ready.size === 0) return undefined;
      for (const job of queue.candidates()) {
        if (!ready.has(job.endpoint)) continue;
        job.plannedAtMs = earliest(job.endpoint);
        return job;
      }
      return undefined;
    };
    // One owed job handed out at a time: the share is counted when a job starts.
    if (![...this.pending].some((job) => job.viaFloor)) {
      // Live jobs handed out will start first: count them, or each round would let one more through.
      const liveAhead = [...this.pending].filter((job) => job.priority === 'live');
      const owed = choose('backfill', (endpoint) => {
        const onEndpoint = liveAhead.filter((job) => job.endpoint === endpoint).length;
        return this.floor.dueFor(endpoint, this.liveWaitsFor(endpoint), {
          all: liveAhead.length,
          onEndpoint,
        });
      });
      if (owed !== undefined) {
        owed.viaFloor = true;
        return owed;
      }
    }
    const live = choose('live', () => true);
    if (live !== undefined) return live;
    // Otherwise backfill waits while a live job is handed out: it cannot tell yet whom it would delay.
    if (![...this.pending].some((job) => job.priority === 'live')) {
      const spare = choose(
        'backfill',
        (e) => !this.yieldsToLive(e, now, DISPATCH_LEAD_MS, extra, earliest, fromMs),
      );
      if (spare !== undefined) return spare;
    }
    // A backfill job held back for live work is looked at again when that work starts (or at
    // its earliest instant, which is in wakeAt).
    return wakeAt;
  }

  private dispatch(job: Job): void {
    this.cancelWake();
    this.queues[job.priority].take(job);
    job.state = 'dispatching';
    this.pending.add(job);
    // Bottleneck runs the job and counts it in flight until `send` settles (maxConcurrent);
    // our gate has said it may start soon, and `run` starts it at the exact instant.
    this.limiter
      .schedule(
        { priority: job.priority === 'live' ? 1 : 5 },
        () => new Promise<void>((done) => this.run(job, done)),
      )
      .catch(() => undefined);
  }

  /**
   * Inside bottleneck: starts the job at the exact instant every rule allows (waiting for it on
   * our own timer when handed out early), with the check and the record as one step against
   * the starts actually made; or gives it back to the queue when that instant moved away.
   */
  private run(job: Job, done: () => void): void {
    job.waiting = undefined;
    if (job.state !== 'dispatching') {
      this.pending.delete(job);
      done();
      this.pump();
      return;
    }
    const now = this.now();
    const exact = (e: EndpointKind) => this.earliestFor(e, now);
    const yields =
      job.priority === 'backfill' &&
      !job.viaFloor &&
      this.yieldsToLive(job.endpoint, now, 0, new Map(), exact);
    const at = yields ? Number.POSITIVE_INFINITY : exact(job.endpoint);
    const acquired = at > now ? undefined : this.store.tryAcquire(this.specsFor(job.endpoint, now), now);
    if (acquired === undefined || !acquired.acquired) {
      if (at - now <= 2 * DISPATCH_LEAD_MS) {
        job.waiting = {
          handle: this.clock.setTimeout(() => this.run(job, done), Math.max(1, Math.ceil(at - now))),
          done,
        };
        return;
      }
      // The instant moved away (a pause, live work, the day is full): queue again, to be chosen anew.
      this.pending.delete(job);
      job.viaFloor = false;
      job.state = 'queued';
      this.queues[job.priority].pushFront(job);
      done();
      this.pump();
      return;
    }
    this.pending.delete(job);
    job.state = 'started';
    this.recordShare(job);
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    const wait = this.waits[job.priority];
    wait.started++;
    wait.totalMs += now - job.enqueuedAtMs;
    wait.maxMs = Math.max(wait.maxMs, now - job.enqueuedAtMs);
    this.startedPerEndpoint[job.endpoint] = (this.startedPerEndpoint[job.endpoint] ?? 0) + 1;
    this.ledger.started(job.sourceId, job.endpoint, job.priority, now - job.enqueuedAtMs, now);
    this.ledger.prune((id) => this.queuedOf(id) > 0);
    this.inFlight++;
    let sent: Promise<unknown>;
    try {
      sent = Promise.resolve(job.send());
    } catch (error) {
      sent = Promise.reject(error);
    }
    this.pump();
    const ticket = acquired.ticket;
    void sent
      .then(
        (value) => this.finish(job, ticket, () => job.resolve(value)),
        (error: unknown) => this.finish(job, ticket, () => job.reject(error)),
      )
      .then(done);
  }

  private finish(job: Job, ticket: StartTicket, settle: () => void): void {
    // The request has arrived by now, whatever the network did: its windows count from here.
    this.store.settle(ticket, this.now());
    this.inFlight--;
    this.ledger.settled(job.sourceId);
    job.state = 'settled';
    settle();
    this.pump();
  }

  private abort(job: Job): void {
    if (job.state !== 'queued' && job.state !== 'dispatching') return;
    if (job.state === 'queued') this.queues[job.priority].remove(job);
    this.settle(job, () => job.reject(job.signal?.reason));
    this.pump();
  }

  /** Settles a job that never started. */
  private settle(job: Job, settle: () => void): void {
    if (job.state === 'started' || job.state === 'settled') return;
    job.state = 'settled';
    job.removed = true;
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.waiting !== undefined) {
      // Handed out and waiting for its instant: free its place in bottleneck now.
      this.clock.clearTimeout(job.waiting.handle);
      job.waiting.done();
      job.waiting = undefined;
      this.pending.delete(job);
    }
    settle();
  }

  /** Counts a start in backfill's reserved shares (see {@link BackfillFloor}); spare backfill starts are extras. */
  private recordShare(job: Job): void {
    if (job.priority === 'backfill') {
      if (job.viaFloor) this.floor.owedStarted(job.endpoint, this.liveWaitsFor(job.endpoint));
      return;
    }
    // Backfill waits while it has a job queued or handed out.
    const waiting = (e?: EndpointKind): boolean => {
      const queued =
        e === undefined ? this.queues.backfill.size : (this.queues.backfill.perEndpoint.get(e) ?? 0);
      if (queued > 0) return true;
      for (const other of this.pending)
        if (other.priority === 'backfill' && (e === undefined || other.endpoint === e)) return true;
      return false;
    };
    this.floor.liveStarted(job.endpoint, { any: waiting(), onEndpoint: waiting(job.endpoint) });
  }

  /** Whether a live job of `endpoint` is queued or handed out. */
  private liveWaitsFor(endpoint: EndpointKind): boolean {
    if ((this.queues.live.perEndpoint.get(endpoint) ?? 0) > 0) return true;
    for (const job of this.pending) if (job.priority === 'live' && job.endpoint === endpoint) return true;
    return false;
  }

  /** Jobs of `sourceId` queued now, both priorities. */
  private queuedOf(sourceId: string): number {
    return this.queues.live.queuedOf(sourceId) + this.queues.backfill.queuedOf(sourceId);
  }

  private armWake(atMs: number, now: number): void {
    if (atMs === this.wakeAtMs) return;
    this.cancelWake();
    if (!Number.isFinite(atMs)) return;
    this.wakeAtMs = atMs;
    this.wakeHandle = this.clock.setTimeout(
      () => {
        this.wakeHandle = undefined;
        this.wakeAtMs = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, atMs - now),
    );
  }

  private cancelWake(): void {
    if (this.wakeHandle !== undefined) this.clock.clearTimeout(this.wakeHandle);
    this.wakeHandle = undefined;
    this.wakeAtMs = Number.POSITIVE_INFINITY;
  }
}

function closedError(): QuoteflowError {
  return new QuoteflowError(
    'QF_CLOSED',
    'scheduler: closed before the request could start; create a new one',
  );
}

function validate(limits: PlanLimits, options: PlanScheduler['options']): void {
  const fail = (message: string, option = /"(\w+)"/.exec(message)?.[1] ?? 'limits') => {
    throw new InvalidOptionError(option, `PlanScheduler: ${message}`);
  };
  for (const rule of limits.rules) {
    if (!Number.isInteger(rule.limit) || rule.limit < 1 || !(rule.windowMs > 0)) {
      fail(
        `rule "${rule.id}" needs an integer limit >= 1 and windowMs > 0, got ${rule.limit} per ${rule.windowMs} ms`,
      );
    }
  }
  if (!Number.isInteger(limits.perDay) || limits.perDay < 1)
    fail(`"perDay" must be an integer >= 1, got ${limits.perDay}`);
  if (!(options.marginMs >= 0) || !Number.isFinite(options.marginMs))
    fail(`"marginMs" must be a finite number >= 0, got ${options.marginMs}`);
  if (!(options.maxInFlight >= 1))
    fail(`"maxInFlight" must be >= 1 (or Infinity), got ${options.maxInFlight}`);
  for (const name of ['rateLimitBackoffMs', 'rateLimitMaxBackoffMs', 'recoveryMs'] as const) {
    if (!(options[name] >= 0) || !Number.isFinite(options[name]))
      fail(`"${name}" must be a finite number >= 0, got ${options[name]}`);
  }
  if (!(options.smoothing >= 0 && options.smoothing <= 1))
    fail(`"smoothing" must be from 0 to 1, got ${options.smoothing}`);
  if (!(options.backfillShare > 0 && options.backfillShare <= 0.5))
    fail(`"backfillShare" must be above 0 and at most 0.5, got ${options.backfillShare}`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: options.dailyResetTimeZone });
  } catch {
    fail(`"dailyResetTimeZone" must be an IANA time zone, got ${JSON.stringify(options.dailyResetTimeZone)}`);
  }
}
