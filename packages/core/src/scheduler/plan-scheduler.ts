import Bottleneck from 'bottleneck';
import { ENDPOINT_KINDS, type EndpointKind, type PlanLimits } from '../plans.js';
import { PRIORITIES, type RequestScheduler, type ScheduledRequest } from '../request-scheduler.js';
import { DISPATCH_LEAD_MS, FairShares } from './internal/fair-shares.js';
import { PlanWindows } from './internal/plan-windows.js';
import { RateLimitBackoff } from './internal/rate-limit-backoff.js';
import type { SchedulerJob } from './internal/scheduler-job.js';
import { SourceLedger } from './internal/source-ledger.js';
import { StartGate } from './internal/start-gate.js';
import { WakeTimer } from './internal/wake-timer.js';
import { MemoryWindowStore } from './memory-window-store.js';
import { systemClock, type Clock } from '../clock.js';
import { QuoteflowError } from '../errors.js';
import { resolvePlanSchedulerOptions, type PlanSchedulerOptions } from './plan-scheduler-options.js';
import {
  planSchedulerStats,
  SOURCE_SHARE_WINDOW_MS,
  StartTally,
  type DailyBudget,
  type PlanSchedulerStats,
} from './plan-scheduler-stats.js';
import type { AcquireResult, StartTicket, WindowStore } from './window-store.js';

export { PLAN_SCHEDULER_DEFAULTS } from './plan-scheduler-options.js';
export type { PlanSchedulerOptions } from './plan-scheduler-options.js';
export type {
  DailyBudget,
  PlanSchedulerStats,
  RuleStats,
  SourceRequestStats,
  SourceStats,
  SourceWaitStats,
  WaitBucket,
  WaitStats,
} from './plan-scheduler-stats.js';

const DEFAULT_SOURCE = '';
/** After an asynchronous store failed to answer (it should answer a refusal instead), in ms. */
const STORE_FAILED_RETRY_MS = 1_000;

/**
 * The plan scheduler: every request of one token goes through {@link PlanScheduler.schedule},
 * which starts `send` only when every sliding-window rule of the plan, the daily total (calendar
 * day of `dailyResetTimeZone`) and any rate-limit pause allow one more request arrival.
 *
 * - Limit safety comes from an exact gate over per-rule logs of start times ({@link WindowStore}):
 *   a job starts at the earliest instant every applicable rule allows, each window widened by
 *   `marginMs`, and the start is recorded atomically with the check.
 * - Fair shares, counted in starts across endpoints: live first, but backfill is owed one start in
 *   every `ceil(1 / backfillShare)` while it waits (and takes every start live work leaves); within
 *   a priority the least recently served source whose next job may start goes next. The policy and
 *   its bound on how many starts can come before a waiting source's are stated on `FairShares`
 *   (`internal/fair-shares.ts`); the README's "Scheduling" section summarises them.
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
  private readonly backoff: RateLimitBackoff;
  private readonly gate: StartGate;
  private readonly shares: FairShares;
  private readonly limiter: Bottleneck;
  private readonly wake: WakeTimer;
  private inFlight = 0;
  /** Starts acquired too late to be sent (an asynchronous store), given back unused. */
  private unusedStarts = 0;
  private lastNowMs = Number.NEGATIVE_INFINITY;
  private readonly tally = new StartTally();
  private readonly ledger = new SourceLedger(SOURCE_SHARE_WINDOW_MS);
  private closing: Promise<void> | undefined;

  /**
   * @param limits - the plan's limits (`planLimits(plan)`).
   * @param options - see {@link PlanSchedulerOptions}; defaults in {@link PLAN_SCHEDULER_DEFAULTS}.
   * @throws InvalidOptionError (`QF_INVALID_OPTION`) when an option or a limit is out of range.
   */
  constructor(limits: PlanLimits, options: PlanSchedulerOptions = {}) {
    this.limits = limits;
    this.options = resolvePlanSchedulerOptions(limits, options);
    this.clock = options.clock ?? systemClock;
    this.store = options.store ?? new MemoryWindowStore();
    this.windows = new PlanWindows(
      limits,
      this.options.marginMs,
      this.options.dailyResetTimeZone,
      this.options.smoothing,
      this.options.countFrom,
      this.options.dailyWindow,
      this.store.arrivalSpanMs ?? this.options.marginMs,
    );
    this.backoff = new RateLimitBackoff(
      this.options.rateLimitBackoffMs,
      this.options.rateLimitMaxBackoffMs,
      this.options.recoveryMs,
    );
    this.gate = new StartGate(this.windows, this.store, this.backoff);
    this.shares = new FairShares(this.gate, this.options.backfillShare);
    const maxInFlight = this.options.maxInFlight;
    this.limiter = new Bottleneck({ maxConcurrent: Number.isFinite(maxInFlight) ? maxInFlight : null });
    this.wake = new WakeTimer(this.clock, () => this.pump());
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
      const job: SchedulerJob = {
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
      this.shares.queues[job.priority].push(job);
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
    if (!this.backoff.report(this.now())) return;
    this.wake.cancel(); // the wake time moves
    this.pump();
  }

  /**
   * The token's daily total now, as every process sharing the store counted it: requests used,
   * the plan's limit, and, once it is spent, when a request may start again (midnight of
   * `dailyResetTimeZone`, or when the oldest start leaves the rolling 24 hours, whichever
   * `dailyWindow` makes later). Requests queued meanwhile wait for it.
   */
  dailyBudget(): DailyBudget {
    const now = this.now();
    const specs = this.windows.dailySpecs(now);
    const used = Math.max(0, ...specs.map((spec) => this.store.count(spec, now)));
    const nextMs = this.store.earliestStart(specs, now);
    const spent = nextMs > now;
    return { used, limit: this.limits.perDay, spent, resetsAtMs: spent ? nextMs : undefined };
  }

  /** A snapshot of queues, waits, rule windows, utilisation and what each source got. */
  stats(): PlanSchedulerStats {
    const now = this.now();
    const { live, backfill } = this.shares.queues;
    return planSchedulerStats(now, {
      limits: this.limits,
      store: this.store,
      day: this.windows.dayOf(now),
      rollingDay: this.options.dailyWindow === 'calendar' ? undefined : this.windows.rollingDay,
      queued: { live: live.size, backfill: backfill.size },
      inFlight: this.inFlight,
      tally: this.tally,
      backoff: this.backoff,
      unusedStarts: this.unusedStarts,
      sources: this.ledger.snapshot(now, (id) => this.shares.queuedOf(id), [
        ...live.busySources(),
        ...backfill.busySources(),
      ]),
    });
  }

  /**
   * Rejects every queued job with `QF_CLOSED`, refuses new ones, and resolves once the
   * requests in flight have settled. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.wake.cancel();
    const error = closedError();
    const queued = [...this.shares.queues.live.drain(), ...this.shares.queues.backfill.drain()];
    queued.push(...this.shares.pending);
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

  /**
   * Hands out every job that may start within {@link DISPATCH_LEAD_MS} (counting those handed out
   * and not started yet as if they started now), then arms one timer for the next.
   */
  private pump(): void {
    while (!this.closed && this.inFlight + this.shares.pending.size < this.options.maxInFlight) {
      const now = this.now();
      const next = this.shares.pick(now);
      if (typeof next === 'number') {
        this.wake.arm(next - DISPATCH_LEAD_MS, now);
        return;
      }
      this.dispatch(next);
    }
  }

  private dispatch(job: SchedulerJob): void {
    this.wake.cancel();
    this.shares.queues[job.priority].take(job);
    job.state = 'dispatching';
    this.shares.pending.add(job);
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
  private run(job: SchedulerJob, done: () => void): void {
    job.waiting = undefined;
    if (job.state !== 'dispatching') {
      this.release(job, done);
      return;
    }
    const now = this.now();
    const exact = (e: EndpointKind) => this.gate.earliestFor(e, now);
    const yields =
      job.priority === 'backfill' &&
      !job.viaFloor &&
      this.shares.yieldsToLive(job.endpoint, now, 0, new Map(), exact);
    const at = yields ? Number.POSITIVE_INFINITY : exact(job.endpoint);
    if (at > now) {
      this.retryOrRequeue(job, done, now, at);
      return;
    }
    const acquired = this.gate.tryAcquire(job.endpoint, now);
    if (acquired instanceof Promise) {
      // A store across the network: the job keeps its place in bottleneck while the store answers.
      void acquired
        .catch((): AcquireResult => ({ acquired: false, retryAtMs: this.now() + STORE_FAILED_RETRY_MS }))
        .then((result) => this.acquiredLater(job, done, now, at, result));
      return;
    }
    this.afterAcquire(job, done, now, at, acquired);
  }

  /**
   * The answer of an asynchronous store to the acquisition called at `calledAtMs`. A start that came
   * too late to be sent (`sendWithinMs`), or for a job aborted or closed meanwhile, is given back
   * unused (settled now: it never arrives).
   */
  private acquiredLater(
    job: SchedulerJob,
    done: () => void,
    calledAtMs: number,
    at: number,
    result: AcquireResult,
  ): void {
    const now = this.now();
    const stale = now - calledAtMs > (this.store.sendWithinMs ?? Number.POSITIVE_INFINITY);
    if (result.acquired && (job.state !== 'dispatching' || stale)) {
      void this.store.settle(result.ticket, now);
      if (job.state === 'dispatching') {
        this.unusedStarts++;
        this.run(job, done);
        return;
      }
    }
    if (job.state !== 'dispatching') {
      this.release(job, done);
      return;
    }
    this.afterAcquire(job, done, now, at, result);
  }

  private afterAcquire(
    job: SchedulerJob,
    done: () => void,
    now: number,
    at: number,
    acquired: AcquireResult,
  ): void {
    if (!acquired.acquired) {
      // A refusal after the store said yes: another process on the token took the start in
      // between (a shared store). Its retry instant is exact; nothing was sent.
      this.retryOrRequeue(job, done, now, Math.max(at, acquired.retryAtMs));
      return;
    }
    this.shares.pending.delete(job);
    job.state = 'started';
    this.recordStart(job, now);
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

  /** Waits on our own timer for a start instant `retryAt` that is near; else queues the job again. */
  private retryOrRequeue(job: SchedulerJob, done: () => void, now: number, retryAt: number): void {
    if (retryAt - now <= 2 * DISPATCH_LEAD_MS) {
      job.waiting = {
        handle: this.clock.setTimeout(() => this.run(job, done), Math.max(1, Math.ceil(retryAt - now))),
        done,
      };
      return;
    }
    // The instant moved away (a pause, live work, the day is full): queue again, to be chosen anew.
    this.shares.pending.delete(job);
    job.viaFloor = false;
    job.state = 'queued';
    this.shares.queues[job.priority].pushFront(job);
    done();
    this.pump();
  }

  /** A job that left the dispatch (aborted, closed) frees its place in bottleneck. */
  private release(job: SchedulerJob, done: () => void): void {
    this.shares.pending.delete(job);
    done();
    this.pump();
  }

  /** The bookkeeping of a start at `now`: backfill's shares, the abort listener, waits, the ledger. */
  private recordStart(job: SchedulerJob, now: number): void {
    this.shares.recordShare(job);
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    this.tally.started(job.priority, job.endpoint, now - job.enqueuedAtMs);
    this.ledger.started(job.sourceId, job.endpoint, job.priority, now - job.enqueuedAtMs, now);
    this.ledger.prune((id) => this.shares.queuedOf(id) > 0);
  }

  private finish(job: SchedulerJob, ticket: StartTicket, settle: () => void): void {
    // The request has arrived by now, whatever the network did: its windows count from here.
    void this.store.settle(ticket, this.now());
    this.inFlight--;
    this.ledger.settled(job.sourceId);
    job.state = 'settled';
    settle();
    this.pump();
  }

  private abort(job: SchedulerJob): void {
    if (job.state !== 'queued' && job.state !== 'dispatching') return;
    if (job.state === 'queued') this.shares.queues[job.priority].remove(job);
    this.settle(job, () => job.reject(job.signal?.reason));
    this.pump();
  }

  /** Settles a job that never started. */
  private settle(job: SchedulerJob, settle: () => void): void {
    if (job.state === 'started' || job.state === 'settled') return;
    job.state = 'settled';
    job.removed = true;
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.waiting !== undefined) {
      // Handed out and waiting for its instant: free its place in bottleneck now.
      this.clock.clearTimeout(job.waiting.handle);
      job.waiting.done();
      job.waiting = undefined;
      this.shares.pending.delete(job);
    }
    settle();
  }
}

function closedError(): QuoteflowError {
  return new QuoteflowError(
    'QF_CLOSED',
    'scheduler: closed before the request could start; create a new one',
  );
}
