import Bottleneck from 'bottleneck';
import { ENDPOINT_KINDS, type EndpointKind, type PlanLimits, type WindowRule } from '../plans.js';
import {
  PRIORITIES,
  type Priority,
  type RequestScheduler,
  type ScheduledRequest,
} from '../request-scheduler.js';
import { FairQueue, type FairQueueItem } from './internal/fair-queue.js';
import { PlanWindows } from './internal/plan-windows.js';
import { MemoryWindowStore } from './memory-window-store.js';
import { systemClock, type Clock } from '../clock.js';
import { InvalidOptionError, QuoteflowError } from '../errors.js';
import type { StartTicket, WindowSpec, WindowStore } from './window-store.js';

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
} as const;

/** Wait statistics of one priority (queue entry to start). */
export interface WaitStats {
  readonly started: number;
  readonly meanWaitMs: number;
  readonly maxWaitMs: number;
}

/** One rule's state: starts in the window that ends now (nominal window, margin not included). */
export interface RuleStats {
  readonly id: string;
  readonly scope: WindowRule['scope'];
  readonly windowMs: number;
  readonly limit: number;
  readonly startsInWindow: number;
  /** `startsInWindow / limit`. */
  readonly fill: number;
}

/** A snapshot of {@link PlanScheduler.stats}. */
export interface PlanSchedulerStats {
  readonly atMs: number;
  readonly queued: Readonly<Record<Priority, number>>;
  readonly inFlight: number;
  readonly waits: Readonly<Record<Priority, WaitStats>>;
  readonly startedPerEndpoint: Readonly<Partial<Record<EndpointKind, number>>>;
  readonly rules: readonly RuleStats[];
  readonly day: { readonly starts: number; readonly limit: number; readonly resetsAtMs: number };
  readonly rateLimitReports: number;
  /** Set while starts are paused after a "rate limit" answer. */
  readonly pausedUntilMs: number | undefined;
  /** Set while starts are paced after a pause. */
  readonly recoveringUntilMs: number | undefined;
  /**
   * How close the plan is to its binding rule right now: the largest `fill` of any rule. On a
   * saturated backlog it stays near `windowMs / (windowMs + marginMs)`.
   */
  readonly utilisation: number;
}

type JobState = 'queued' | 'dispatching' | 'started' | 'settled';

interface Job extends FairQueueItem {
  readonly priority: Priority;
  readonly signal: AbortSignal | undefined;
  readonly send: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly enqueuedAtMs: number;
  state: JobState;
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
 * - Order: `live` before `backfill` (a backfill job never takes a slot a waiting live job could use
 *   now or would need first); within a priority, round-robin across `sourceId`s.
 * - Queueing is lazy and cheap: jobs wait in an internal queue per priority; only the one job that
 *   may start now is handed to bottleneck, which runs it and caps requests in flight
 *   (`maxInFlight`). Ten thousand queued jobs are ten thousand small records and one timer.
 * - `reportRateLimited` pauses all starts with exponential backoff, then paces them (half rate,
 *   then full rate) so a backlog never leaves in a burst.
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
    };
    validate(limits, this.options);
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
        state: 'queued',
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

  /** A snapshot of queues, waits, rule windows and utilisation. */
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

  /** The earliest instant >= now at which one more job of `endpoint` may start. */
  private earliestFor(endpoint: EndpointKind, now: number, extra?: ReadonlyMap<string, number>): number {
    return Math.max(this.pausedUntilMs, this.store.earliestStart(this.specsFor(endpoint, now), now, extra));
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
      if (this.earliestFor(liveEndpoint, now, withThis) > base) return true;
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

  /** The next job that may start soon, or the earliest instant one may. */
  private pick(now: number): Job | number {
    const extra = this.pendingStarts(now);
    const cache = new Map<EndpointKind, number>();
    const earliest = (endpoint: EndpointKind): number => {
      let t = cache.get(endpoint);
      if (t === undefined) cache.set(endpoint, (t = this.earliestFor(endpoint, now, extra)));
      return t;
    };
    const soon = now + DISPATCH_LEAD_MS;
    let wakeAt = Number.POSITIVE_INFINITY;
    for (const priority of PRIORITIES) {
      const queue = this.queues[priority];
      if (queue.size === 0) continue;
      // Backfill waits while a live job is handed out: it cannot tell yet whom it would delay.
      if (priority === 'backfill' && [...this.pending].some((job) => job.priority === 'live')) continue;
      // Decide per endpoint first (at most five), so a long blocked queue is never walked.
      const ready = new Set<EndpointKind>();
      for (const [endpoint, count] of queue.perEndpoint) {
        if (count <= 0) continue;
        const t = earliest(endpoint);
        if (t > soon) wakeAt = Math.min(wakeAt, t);
        else if (
          priority === 'live' ||
          !this.yieldsToLive(endpoint, now, DISPATCH_LEAD_MS, extra, earliest)
        ) {
          ready.add(endpoint);
        }
      }
      if (ready.size === 0) continue;
      for (const job of queue.candidates()) if (ready.has(job.endpoint)) return job;
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
    const yields = job.priority === 'backfill' && this.yieldsToLive(job.endpoint, now, 0, new Map(), exact);
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
      // The instant moved away (a pause, live work, the day is full): queue again.
      this.pending.delete(job);
      job.state = 'queued';
      this.queues[job.priority].pushFront(job);
      done();
      this.pump();
      return;
    }
    this.pending.delete(job);
    job.state = 'started';
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    const wait = this.waits[job.priority];
    wait.started++;
    wait.totalMs += now - job.enqueuedAtMs;
    wait.maxMs = Math.max(wait.maxMs, now - job.enqueuedAtMs);
    this.startedPerEndpoint[job.endpoint] = (this.startedPerEndpoint[job.endpoint] ?? 0) + 1;
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
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: options.dailyResetTimeZone });
  } catch {
    fail(`"dailyResetTimeZone" must be an IANA time zone, got ${JSON.stringify(options.dailyResetTimeZone)}`);
  }
}
