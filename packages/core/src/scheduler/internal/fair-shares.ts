import type { EndpointKind } from '../../plans.js';
import type { Priority } from '../../request-scheduler.js';
import { BackfillFloor } from './backfill-floor.js';
import { FairQueue } from './fair-queue.js';
import type { SchedulerJob } from './scheduler-job.js';
import type { StartGate } from './start-gate.js';

/**
 * How early a job is handed to bottleneck before its start instant, in ms. Bottleneck's dispatch
 * takes a few timer turns (2-8 ms per job measured on a loaded 2-core machine); handing the job
 * over early hides that, while the exact start instant is kept by our own timer inside the job.
 */
export const DISPATCH_LEAD_MS = 40;

/**
 * The scheduler's waiting jobs (a {@link FairQueue} per priority, and the jobs handed to
 * bottleneck that have not started yet) and the fair-share policy that picks which starts next.
 *
 * Every request costs one start of the combined rules, which every endpoint shares, so shares
 * are counted in starts, across endpoints. The policy is hierarchical (priority, then source) and
 * work-conserving:
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
 * in both cases plus the one or two jobs already handed out ({@link DISPATCH_LEAD_MS}) when it
 * became ready. So a busy source gets at least `1 / n` of its priority's starts, backfill at least
 * `1 / N` of all starts (of its endpoint's, where live work competes for the same endpoint) while
 * it has work, and a `/depth-tick` poller cannot starve `/kline` or `/batch-kline` through the
 * combined rules; the plan's windows turn these counts into time (an endpoint that opens only now
 * and then, like `/batch-kline`, adds its interval per source ahead). A lone source gets every
 * start the plan allows. `plan-scheduler.fairness.test.ts` checks these bounds under random
 * sources.
 */
export class FairShares {
  readonly queues: Readonly<Record<Priority, FairQueue<SchedulerJob>>> = {
    live: new FairQueue(),
    backfill: new FairQueue(),
  };
  /** Jobs handed to bottleneck that have not started yet. */
  readonly pending = new Set<SchedulerJob>();
  private readonly floor: BackfillFloor;

  /** @param backfillShare - the fraction of starts reserved for backfill while it waits. */
  constructor(
    private readonly gate: StartGate,
    backfillShare: number,
  ) {
    this.floor = new BackfillFloor(backfillShare);
  }

  /**
   * The next job that may start soon (within {@link DISPATCH_LEAD_MS}), or the earliest instant
   * one may: backfill when its reserved share is due, else live, else backfill that delays no
   * live work.
   */
  pick(now: number): SchedulerJob | number {
    const extra = this.gate.pendingStarts(this.pending, now);
    // Jobs handed out start one after another: count them as made at the last one's instant, not
    // now, or a spacing rule (limit 1) would let a whole burst be handed out at once, in an order
    // fixed before later arrivals from other sources are looked at.
    let fromMs = now;
    for (const job of this.pending) fromMs = Math.max(fromMs, job.plannedAtMs);
    const cache = new Map<EndpointKind, number>();
    const earliest = (endpoint: EndpointKind): number => {
      let t = cache.get(endpoint);
      if (t === undefined) cache.set(endpoint, (t = this.gate.earliestFor(endpoint, now, extra, fromMs)));
      return t;
    };
    const soon = now + DISPATCH_LEAD_MS;
    let wakeAt = Number.POSITIVE_INFINITY;
    /** The fair choice among the jobs of `priority` that may start soon on an endpoint `allowed` lets through. */
    const choose = (
      priority: Priority,
      allowed: (endpoint: EndpointKind) => boolean,
    ): SchedulerJob | undefined => {
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

  /**
   * Whether a backfill start of `endpoint` must give way to live work: a live job (queued, or
   * handed out and not yet started) that may start by `now + horizonMs`, or one whose earliest
   * start a start of this job now would push later.
   */
  yieldsToLive(
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
        for (const spec of this.gate.specsFor(endpoint, now))
          withThis.set(spec.key, (withThis.get(spec.key) ?? 0) + 1);
      }
      if (this.gate.earliestFor(liveEndpoint, now, withThis, fromMs) > base) return true;
    }
    return false;
  }

  /** Counts a start in backfill's reserved shares (see {@link BackfillFloor}); spare backfill starts are extras. */
  recordShare(job: SchedulerJob): void {
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

  /** Jobs of `sourceId` queued now, both priorities. */
  queuedOf(sourceId: string): number {
    return this.queues.live.queuedOf(sourceId) + this.queues.backfill.queuedOf(sourceId);
  }

  /** Whether a live job of `endpoint` is queued or handed out. */
  private liveWaitsFor(endpoint: EndpointKind): boolean {
    if ((this.queues.live.perEndpoint.get(endpoint) ?? 0) > 0) return true;
    for (const job of this.pending) if (job.priority === 'live' && job.endpoint === endpoint) return true;
    return false;
  }
}
