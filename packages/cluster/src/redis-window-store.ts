import { createHash, randomUUID } from 'node:crypto';
import {
  systemClock,
  type AcquireResult,
  type Clock,
  type EndpointKind,
  type PlanLimits,
  type StartTicket,
  type WindowSpec,
  type WindowStore,
} from '@quoteflow/core';
import { MemoryWindowStore } from '@quoteflow/core/internal';
import type { Redis } from 'ioredis';
import { ClusterError } from './cluster-error.js';
import { QuotaRecovery } from './internal/quota-recovery.js';
import { ACQUIRE_SCRIPT, PAUSE_SCRIPT, SETTLE_SCRIPT } from './internal/quota-scripts.js';
import { SharedWindows, type SharedSpecs } from './internal/shared-windows.js';
import { closeRedis, openRedis, type RedisHandle } from './internal/redis-connection.js';
import { RedisOutages } from './internal/redis-outages.js';
import { tokenNamespace } from './internal/token-namespace.js';
import {
  resolveRedisWindowStoreOptions,
  type RedisQuotaEvent,
  type RedisWindowStoreOptions,
  type RedisWindowStoreStats,
} from './redis-window-store-options.js';

type AcquireReply = [1, 0, number, 0] | [0, number, number, 0 | 1] | [-1, string, number, 0];

/** A start recorded in Redis: its member there, and this process's own copy of it. */
export interface RedisStartTicket extends StartTicket {
  /** Unique id of the start (its member in Redis); carries nothing of the token. */
  readonly id: string;
  /** When Redis recorded it (the server's clock). */
  readonly serverMs: number;
  readonly epoch: string;
  /** The Redis keys of its sliding windows (the settle rescores it in each). */
  readonly slidingKeys: readonly string[];
  readonly own: StartTicket;
}

/** While Redis does not answer, the next attempt comes this much later, in ms. */
const UNAVAILABLE_RETRY_MS = 250;
/** Re-seeds into a new state generation before one acquisition gives up for now. */
const MAX_RESEEDS_PER_ACQUIRE = 3;

/**
 * The plan's windows shared by every process of one token on any machine, in Redis: the
 * {@link WindowStore} of a `PlanScheduler` that runs beside others on other hosts (see
 * `SharedPlanScheduler`). {@link tryAcquire} runs one Lua script that checks every window the
 * scheduler passes (sliding rules as sorted sets on the Redis server's clock, the calendar day's
 * counter, the rolling 24 hours) and records the start under all of them, atomically. Several
 * processes on several hosts therefore never exceed any limit together.
 *
 * The service counts ARRIVAL times, and a request arrives between its acquisition and its answer.
 * So every start counts in every sliding window from its acquisition until it settled: while in
 * flight it blocks as if arriving "now", and {@link settle} rescores it to the Redis time of the
 * settle (a second script).
 *
 * - A worker that dies mid-request never settles. Its entry counts at `acquisition + staleAfterMs +
 *   timeout + 1 s + marginMs` (the in-flight bound) once that has passed: the scheduler sends a
 *   start at most {@link sendWithinMs} (`staleAfterMs`) after asking for it, the client gives up on
 *   it at most its timeout after sending, and after that nothing of it travels for long. Until
 *   then it blocks. A settle that cannot reach Redis is retried once Redis answers again.
 * - Redis away (down, unreachable, timing out): nothing is acquired, so nothing starts; the
 *   scheduler asks again every {@link UNAVAILABLE_RETRY_MS}, and `redis-unavailable` is reported
 *   at once and every few seconds after. A reply lost in transit counts as refused (a start
 *   recorded but not made only wastes quota; it is settled once Redis is back).
 * - Redis lost its data: the first worker to notice opens a new state generation with a hold of
 *   `lostStateHoldMs` (no start until old starts left every window); every worker re-seeds its
 *   own recent starts, its view of today's count and the participants it saw active into it
 *   before it acquires again (an idle one too: it looks every `watchIntervalMs`). Once every
 *   participant seen active has re-seeded, the hold ends after `recoveryGraceMs`; one that died
 *   with the data keeps the full hold.
 * - {@link earliestStart} is a lower bound from what this process knows: its own starts (kept in
 *   a {@link MemoryWindowStore}), the last refusal Redis gave for the same windows, and an outage;
 *   {@link count} counts this process's starts only.
 *
 * @example
 * ```ts
 * const store = new RedisWindowStore({ redis: 'redis://127.0.0.1:6379', token, limits: planLimits('premium') });
 * const scheduler = new PlanScheduler(planLimits('premium'), { store });
 * // … (or simply: new SharedPlanScheduler({ redis, token, limits }))
 * await scheduler.close();
 * await store.close();
 * ```
 */
export class RedisWindowStore implements WindowStore, AsyncDisposable {
  readonly limits: PlanLimits;
  /** A start granted later than this after the call is not sent (see the class). */
  readonly sendWithinMs: number;
  /** A start this close to midnight may arrive the next day: its in-flight bound, in ms. */
  readonly arrivalSpanMs: number;
  private readonly clock: Clock;
  private readonly handle: RedisHandle;
  private readonly namespace: string;
  private readonly windows: SharedWindows;
  private readonly recovery: QuotaRecovery;
  private readonly holdMs: number;
  private readonly graceMs: number;
  private readonly settlePollMs: number;
  /** The in-flight bound of a start, in ms after its acquisition (see the class), per kind of request. */
  private readonly boundMs: { readonly request: number; readonly suspension: number };
  private readonly keyTtlExtraMs: number;
  private readonly queueGraceMs: number;
  /** This process's waiter id per set of sliding windows (see `internal/quota-queue-scripts.ts`). */
  private readonly waiters = new Map<string, string>();
  /** How long a start matters to a sliding window, in ms (longest window plus in-flight bound). */
  private readonly horizonMs: number;
  /**
   * A participant that watched within this long counts as alive: a newcomer's first start waits
   * for its next watch (three watch periods).
   */
  private readonly watcherAliveMs: number;
  private readonly onEvent: (event: RedisQuotaEvent) => void;
  /** This process's own starts: a lower bound of everyone's. */
  private readonly own = new MemoryWindowStore();
  /** The last refusal per set of windows: no start before `untilMs`; `inFlight` when a request in flight blocked. */
  private readonly blocked = new Map<string, { untilMs: number; inFlight: boolean }>();
  /** No attempt before this while Redis does not answer (for ever once closed). */
  private unavailableUntilMs = Number.NEGATIVE_INFINITY;
  /** Acquire replies lost (see {@link RedisWindowStoreStats.lostReplies}). */
  private lostReplies = 0;
  /** The latest instant seen on our side: waits are measured from it (a wall clock may step back). */
  private lastNowMs = Number.NEGATIVE_INFINITY;
  /** Starts whose settle (or whose lost acquire reply) still has to reach Redis. */
  private readonly orphans = new Map<string, { slidingKeys: readonly string[]; epoch: string }>();
  private flushing: Promise<void> | undefined;
  /** Settle calls under way (close waits for them). */
  private readonly settling = new Set<Promise<void>>();
  private readonly nonce = randomUUID().slice(0, 8);
  private sequence = 0;
  /** This process's id among the token's participants (random; nothing of the token). */
  private readonly participant = randomUUID();
  private readonly watchTimer: NodeJS.Timeout;
  private watching = false;
  private reseeding: { epoch: string; done: Promise<void> } | undefined;
  private epoch = '';
  private closing: Promise<void> | undefined;
  private acquired = 0;
  private refusedAttempts = 0;
  private readonly outages: RedisOutages;

  /** @throws ClusterError `QF_INVALID_OPTION` for a bad option. */
  constructor(options: RedisWindowStoreOptions) {
    const resolved = resolveRedisWindowStoreOptions(options);
    this.limits = options.limits;
    this.clock = options.clock ?? systemClock;
    this.namespace = tokenNamespace(resolved.keyPrefix, options.token);
    this.sendWithinMs = resolved.staleAfterMs;
    this.settlePollMs = Math.ceil(resolved.settlePollMs);
    const bound = (timeoutMs: number) =>
      Math.ceil(resolved.staleAfterMs + timeoutMs + AFTER_TIMEOUT_MS + resolved.marginMs);
    this.boundMs = {
      request: bound(resolved.timeouts.requestMs),
      suspension: bound(resolved.timeouts.suspensionMs),
    };
    const longestBoundMs = Math.max(this.boundMs.request, this.boundMs.suspension);
    this.arrivalSpanMs = longestBoundMs;
    // A key matters until its newest entry (scored up to one bound ahead) has left the window.
    this.keyTtlExtraMs = longestBoundMs + 1_000;
    this.windows = new SharedWindows(
      this.namespace,
      options.limits,
      resolved.marginMs,
      resolved.dailyResetTimeZone,
      resolved.dailyWindow,
      longestBoundMs,
    );
    this.holdMs = options.lostStateHoldMs ?? this.windows.longestSlidingMs;
    if (!(this.holdMs >= 0))
      throw new ClusterError(
        'QF_INVALID_OPTION',
        `RedisWindowStore: "lostStateHoldMs" must be >= 0, got ${this.holdMs}`,
      );
    this.graceMs = resolved.recoveryGraceMs;
    this.queueGraceMs = Math.ceil(resolved.queueGraceMs);
    this.horizonMs = this.windows.longestSlidingMs + longestBoundMs;
    this.watcherAliveMs = 3 * resolved.watchIntervalMs;
    this.onEvent = options.onEvent ?? (() => undefined);
    this.outages = new RedisOutages(this.onEvent);
    this.handle = openRedis(options.redis, resolved.commandTimeoutMs);
    const client = this.handle.client as Redis & Record<string, unknown>;
    if (typeof client.qfQuotaAcquire !== 'function') {
      client.defineCommand('qfQuotaAcquire', { lua: ACQUIRE_SCRIPT });
      client.defineCommand('qfQuotaPause', { numberOfKeys: 1, lua: PAUSE_SCRIPT });
      client.defineCommand('qfQuotaSettle', { lua: SETTLE_SCRIPT });
    }
    this.recovery = new QuotaRecovery({
      client: this.handle.client,
      namespace: this.namespace,
      windows: this.windows,
      participant: this.participant,
      holdMs: this.holdMs,
      graceMs: this.graceMs,
      horizonMs: this.horizonMs,
      keyTtlExtraMs: this.keyTtlExtraMs,
    });
    this.watchTimer = setInterval(() => void this.watch(), resolved.watchIntervalMs);
    this.watchTimer.unref();
    void this.watch(); // the day's use, known before the first start
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Resolves when Redis answers a PING (within the command timeout); rejects otherwise. */
  async ping(): Promise<void> {
    await this.handle.client.ping();
  }

  earliestStart(
    specs: readonly WindowSpec[],
    nowMs: number,
    extraStarts?: ReadonlyMap<string, number>,
  ): number {
    const signature = signatureOf(specs);
    let blocked = this.blocked.get(signature)?.untilMs ?? nowMs;
    if (blocked <= nowMs) {
      this.blocked.delete(signature); // past: keys of past days would pile up otherwise
      blocked = nowMs;
    }
    return Math.max(
      this.own.earliestStart(specs, nowMs, extraStarts),
      blocked,
      this.unavailableUntilMs,
      this.daySpentUntil(specs, nowMs),
    );
  }

  /**
   * When the day counters among `specs` allow a start again, as every worker used them (last read
   * plus this process's own since): the day's end once its count reached the limit, else `nowMs`.
   * Redis decides each start anyway; this lets the scheduler (and its daily budget) know it. The
   * rolling 24 hours are left to Redis: they are read summed per hour, too coarse to wait on.
   */
  private daySpentUntil(specs: readonly WindowSpec[], nowMs: number): number {
    let until = nowMs;
    for (const spec of specs) {
      if (spec.kind !== 'bucket') continue;
      const [day] = this.windows.shared([spec]).buckets;
      const used = this.recovery.sharedCount(day!, nowMs);
      if (used !== undefined && used >= spec.limit) until = Math.max(until, spec.endsAtMs);
    }
    return until;
  }

  /**
   * One attempt in Redis: records the start under every spec when all allow it now (Redis's
   * clock), else answers when to ask again. Re-seeds first when Redis lost its data. Never rejects.
   */
  async tryAcquire(
    specs: readonly WindowSpec[],
    nowMs: number,
    endpoint?: EndpointKind,
  ): Promise<AcquireResult> {
    if (this.closed) return { acquired: false, retryAtMs: Number.POSITIVE_INFINITY };
    this.lastNowMs = Math.max(this.lastNowMs, nowMs);
    const shared = this.windows.shared(specs);
    const signature = signatureOf(specs);
    const slidingKeys = settleAnchored(shared);
    // A suspension query may take longest; a start of unknown purpose gets the longest bound.
    const boundMs =
      endpoint === undefined
        ? this.arrivalSpanMs
        : endpoint === 'suspension'
          ? this.boundMs.suspension
          : this.boundMs.request;
    for (let reseeds = 0; reseeds <= MAX_RESEEDS_PER_ACQUIRE; reseeds++) {
      const id = `${this.nonce}.${++this.sequence}`;
      let reply: AcquireReply;
      try {
        reply = await this.acquire(id, shared, boundMs);
      } catch (error) {
        // The reply may be lost after the script recorded the start: settle it once Redis is back.
        this.lostReplies++;
        if (this.epoch !== '') this.orphans.set(id, { slidingKeys, epoch: this.epoch });
        return this.unavailable(error);
      }
      this.redisAvailable();
      if (this.orphans.size > 0) void this.flushOrphans();
      if (reply[0] === 1) {
        this.blocked.delete(signature);
        this.recovery.recordStart(id, reply[2], shared, boundMs);
        this.acquired++;
        const ticket: RedisStartTicket = {
          settleKeys: [],
          id,
          serverMs: reply[2],
          epoch: this.epoch,
          slidingKeys,
          own: recordOwn(this.own, specs, nowMs),
        };
        return { acquired: true, ticket };
      }
      if (reply[0] === 0) {
        this.refusedAttempts++;
        // The wait is measured on the server's clock; the same length on ours is enough.
        const untilMs = this.now() + reply[1] + (reply[3] === 1 ? 0 : 1);
        this.blocked.set(signature, { untilMs, inFlight: reply[3] === 1 });
        return { acquired: false, retryAtMs: untilMs };
      }
      try {
        await this.reseed(String(reply[1]));
      } catch (error) {
        return this.unavailable(error);
      }
    }
    return { acquired: false, retryAtMs: this.now() + UNAVAILABLE_RETRY_MS };
  }

  /**
   * The start of `ticket` settled (its answer or failure came back, so it has arrived by now; or it
   * was never sent): its entries are rescored to the Redis time of this call. Never rejects; a
   * settle that cannot reach Redis is retried once Redis answers again, and until then the entry
   * blocks, up to its in-flight bound.
   */
  settle(ticket: StartTicket, atMs: number): Promise<void> {
    const start = ticket as RedisStartTicket;
    this.own.settle(start.own, atMs);
    // Refusals because a request was in flight may be over now; others poll for it.
    for (const [signature, block] of this.blocked) if (block.inFlight) this.blocked.delete(signature);
    const done = this.settleNow(start.id, start.slidingKeys, start.epoch).then(() => {
      this.settling.delete(done);
    });
    this.settling.add(done);
    return done;
  }

  /**
   * Starts under `spec` at `nowMs`: under a sliding rule, this process's own; under a day counter
   * or the rolling 24 hours, every worker's of the token as last read from Redis (at most a watch
   * interval old) plus this process's own since (the daily budget a worker reports is the token's).
   */
  count(spec: WindowSpec, nowMs: number): number {
    const own = this.own.count(spec, nowMs);
    if (spec.kind === 'sliding') return own;
    const { buckets, rolling } = this.windows.shared([spec]);
    const shared = this.recovery.sharedCount((buckets[0] ?? rolling[0])!, nowMs);
    return Math.max(own, shared ?? 0);
  }

  /** Forgets what this process knows; the shared state in Redis stays. */
  clear(): void {
    this.own.clear();
    this.blocked.clear();
  }

  /**
   * The service answered "rate limit" anyway (a client outside the cluster uses the token): every
   * worker pauses for at least `pauseMs`. Best effort: when Redis is away, nothing starts anyway.
   */
  async reportRateLimited(pauseMs: number): Promise<void> {
    if (this.closed || !(pauseMs > 0)) return;
    try {
      await (
        this.handle.client as unknown as { qfQuotaPause(key: string, ms: number): Promise<number> }
      ).qfQuotaPause(`${this.namespace}:quota:pause`, Math.ceil(pauseMs));
    } catch {
      // Redis away: no start is acquired until it is back, which pauses every worker anyway.
    }
  }

  stats(): RedisWindowStoreStats {
    const now = this.clock.now();
    return {
      acquired: this.acquired,
      refusedAttempts: this.refusedAttempts,
      redisAvailable: this.outages.available,
      outages: this.outages.count,
      outageMs: this.outages.totalMs(now),
      lostReplies: this.lostReplies,
      epoch: this.epoch === '' ? undefined : this.epoch,
    };
  }

  /**
   * Waits for settles under way and closes an owned connection. Settle every start first (close
   * the scheduler first): one settled after close counts until its in-flight bound. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    clearInterval(this.watchTimer);
    this.unavailableUntilMs = Number.POSITIVE_INFINITY; // a scheduler still open waits, never spins
    this.closing = (async () => {
      await Promise.all([...this.settling]);
      if (this.orphans.size > 0) await this.flushOrphans();
      await this.leaveWaitingLists();
      await closeRedis(this.handle);
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async acquire(id: string, specs: SharedSpecs, boundMs: number): Promise<AcquireReply> {
    const { sliding, buckets, rolling } = specs;
    const keys = [
      `${this.namespace}:quota:epoch`,
      `${this.namespace}:quota:pause`,
      `${this.namespace}:quota:seq`,
      `${this.namespace}:quota:members`,
      `${this.namespace}:quota:expected`,
      `${this.namespace}:quota:reseeded`,
      `${this.namespace}:quota:joins`,
      `${this.namespace}:quota:watchers`,
      ...sliding.map((s) => s.key),
      ...buckets.map((b) => b.key),
      ...rolling.flatMap((r) => [r.key, `${r.key}:n`]),
    ];
    const args: (string | number)[] = [
      this.epoch,
      Math.ceil(this.holdMs),
      sliding.length,
      buckets.length,
      id,
      boundMs,
      this.settlePollMs,
      this.participant,
      Math.ceil(this.graceMs),
      Math.ceil(this.horizonMs),
      rolling.length,
      this.watcherAliveMs,
    ];
    for (const s of sliding)
      args.push(s.windowMs, s.limit, s.windowMs + this.keyTtlExtraMs, s.anchor === 'settle' ? 1 : 0);
    for (const b of buckets) args.push(b.limit, b.endsAtMs);
    for (const r of rolling) args.push(r.windowMs, r.limit, r.slotMs);
    keys.push(`${this.namespace}:quota:tickets`, `${this.namespace}:quota:waiters`);
    for (const s of sliding) keys.push(`${s.key}:queue`);
    args.push(this.waiterFor(sliding), this.queueGraceMs);
    const client = this.handle.client as unknown as {
      qfQuotaAcquire(n: number, ...a: (string | number)[]): Promise<unknown>;
    };
    const reply = await client.qfQuotaAcquire(keys.length, ...keys, ...args);
    if (!Array.isArray(reply) || reply.length !== 4) {
      throw new ClusterError('QF_REDIS', 'shared quota: unexpected reply from the acquire script', {
        retryable: true,
      });
    }
    const [status, value, now, inFlight] = reply as [number, number | string, number, number];
    if (status === -1) return [-1, String(value), Number(now), 0];
    if (status === 1) return [1, 0, Number(now), 0];
    return [0, Number(value), Number(now), Number(inFlight) === 1 ? 1 : 0];
  }

  /**
   * A closing store waits for nothing: its waiters lapse at once (they would after their grace),
   * so the starts they held go to the next waiters. Best effort.
   */
  private async leaveWaitingLists(): Promise<void> {
    const ids = [...this.waiters.values()];
    if (ids.length === 0) return;
    try {
      await this.handle.client
        .multi()
        .hdel(`${this.namespace}:quota:tickets`, ...ids)
        .zrem(`${this.namespace}:quota:waiters`, ...ids)
        .exec();
    } catch {
      // Redis away: they lapse after their grace.
    }
  }

  /** This process's waiter for the windows `sliding` (one per endpoint): `participant/<hash of their keys>`. */
  private waiterFor(sliding: SharedSpecs['sliding']): string {
    const signature = sliding.map((s) => s.key).join('\n');
    let waiter = this.waiters.get(signature);
    if (waiter === undefined) {
      const hash = createHash('sha256').update(signature).digest('hex').slice(0, 12);
      waiter = `${this.participant}/${hash}`;
      this.waiters.set(signature, waiter);
    }
    return waiter;
  }

  /** Runs the settle script for `id`; on failure keeps it for {@link flushOrphans}. Never rejects. */
  private async settleNow(id: string, slidingKeys: readonly string[], epoch: string): Promise<void> {
    const keys = [`${this.namespace}:quota:epoch`, ...slidingKeys];
    const client = this.handle.client as unknown as {
      qfQuotaSettle(n: number, ...a: string[]): Promise<unknown>;
    };
    try {
      const atMs = Number(await client.qfQuotaSettle(keys.length, ...keys, epoch, id));
      this.orphans.delete(id);
      this.recovery.settled(id, atMs);
    } catch {
      // Redis away (or closed): the entry blocks until Redis is back and this is retried, at most
      // until its in-flight bound.
      if (this.handle.client.status !== 'end') this.orphans.set(id, { slidingKeys, epoch });
    }
  }

  /** Retries the settles that could not reach Redis (and starts whose reply was lost), one pass at a time. */
  private flushOrphans(): Promise<void> {
    this.flushing ??= (async () => {
      for (const [id, orphan] of [...this.orphans]) {
        this.orphans.delete(id);
        await this.settleNow(id, orphan.slidingKeys, orphan.epoch);
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /**
   * Adopts a new state generation: writes this worker's recent starts, its view of the day's count
   * and the participants it saw active into it (they must re-seed too before the hold ends early).
   * One re-seed per generation at a time (acquisitions and the watch may all notice the loss).
   */
  private reseed(epoch: string): Promise<void> {
    if (this.reseeding?.epoch === epoch) return this.reseeding.done;
    const done = this.reseedNow(epoch).finally(() => {
      if (this.reseeding?.done === done) this.reseeding = undefined;
    });
    this.reseeding = { epoch, done };
    return done;
  }

  private async reseedNow(epoch: string): Promise<void> {
    if (this.epoch === epoch) return;
    const hadEpoch = this.epoch !== '';
    // False: the epoch moved on again; the next attempt re-seeds into the newest one.
    if (!(await this.recovery.reseed(epoch))) return;
    this.epoch = epoch;
    if (hadEpoch) this.onEvent({ type: 'state-reset', atMs: this.clock.now(), epoch });
  }

  /**
   * Every `watchIntervalMs`: reads which participants are active and the day's count (what a
   * re-seed needs), and re-seeds at once when the data was lost, also while this worker has
   * nothing to send. Redis being away is the acquisitions' business: a failed look is skipped.
   */
  private async watch(): Promise<void> {
    if (this.watching || this.closed) return;
    this.watching = true;
    try {
      // No generation joined yet (no start so far): the day's use is still worth knowing.
      if (this.epoch === '') return await this.recovery.readDaily(this.clock.now());
      const epoch = await this.recovery.watch(this.epoch, this.clock.now());
      this.redisAvailable(); // it answered: say so before a re-seed reports the lost state
      if (epoch !== this.epoch) await this.reseed(epoch);
    } catch {
      // Redis away or the reply lost: the next look, or an acquisition, deals with it.
    } finally {
      this.watching = false;
    }
  }

  /** Redis did not answer: no attempt for a while, and say so (at once, then every few seconds). */
  private unavailable(error: unknown): AcquireResult {
    const now = this.now();
    this.unavailableUntilMs = now + UNAVAILABLE_RETRY_MS;
    if (!this.closed) this.outages.down(error, now);
    return { acquired: false, retryAtMs: this.unavailableUntilMs };
  }

  /** Our side's time, never going backwards. */
  private now(): number {
    this.lastNowMs = Math.max(this.lastNowMs, this.clock.now());
    return this.lastNowMs;
  }

  private redisAvailable(): void {
    this.outages.up(this.clock.now());
  }
}

/**
 * Time a request can still reach the service after its client gave up on it (bytes already in the
 * network when the socket is destroyed), in ms: part of the in-flight bound.
 */
const AFTER_TIMEOUT_MS = 1_000;

/** Identifies a set of windows (the same endpoint asks with the same keys). */
function signatureOf(specs: readonly WindowSpec[]): string {
  return specs.map((s) => s.key).join('\n');
}

/** The Redis keys of the windows whose entries a settle rescores. */
function settleAnchored(specs: SharedSpecs): string[] {
  return specs.sliding.filter((s) => s.anchor === 'settle').map((s) => s.key);
}

/** Records a start granted by Redis in this process's own copy (always allowed there: a subset). */
function recordOwn(own: MemoryWindowStore, specs: readonly WindowSpec[], nowMs: number): StartTicket {
  const result = own.tryAcquire(specs, nowMs);
  // Redis allowed it with everyone's starts counted; our own are a subset, unless our clock and
  // Redis's disagree on a window's edge. Then the copy only records what settle must release.
  return result.acquired ? result.ticket : { settleKeys: [] };
}
