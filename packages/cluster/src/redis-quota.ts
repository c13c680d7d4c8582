import { randomUUID } from 'node:crypto';
import { PRIORITIES, type EndpointKind, type PlanLimits, type Priority } from '@quoteflow/core';
import type { Redis } from 'ioredis';
import { ClusterError } from './cluster-error.js';
import { QuotaRecovery } from './internal/quota-recovery.js';
import { ACQUIRE_SCRIPT, PAUSE_SCRIPT, SETTLE_SCRIPT } from './internal/quota-scripts.js';
import { SharedWindows, type SharedSpecs } from './internal/shared-windows.js';
import { closeRedis, openRedis, whenReady, type RedisHandle } from './internal/redis-connection.js';
import { tokenNamespace } from './internal/token-namespace.js';
import {
  REDIS_QUOTA_DEFAULTS,
  REDIS_UNAVAILABLE_REMINDER_MS,
  type RedisQuotaEvent,
  type RedisQuotaOptions,
  type RedisQuotaStats,
  type Reservation,
} from './redis-quota-options.js';

interface Waiter {
  readonly endpoint: EndpointKind;
  readonly priority: Priority;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (reservation: Reservation) => void;
  readonly reject: (reason: unknown) => void;
  onAbort: (() => void) | undefined;
}

type AcquireReply = [1, 0, number, 0] | [0, number, number, 0 | 1] | [-1, string, number, 0];

/**
 * Time a request can still reach the service after its client gave up on it (bytes already in the
 * network when the socket is destroyed), in ms: part of the in-flight bound.
 */
const AFTER_TIMEOUT_MS = 1_000;

/**
 * The plan's quota shared by every worker of one token through Redis: {@link RedisQuota.reserve}
 * resolves only after one Lua script has checked every sliding rule (sorted sets on the Redis
 * server's clock) and the daily total (the calendar day's counter and the rolling 24 hours, as
 * `dailyWindow` says; the same windows as core's `PlanScheduler`, from core's `PlanWindows`), and
 * recorded the request under all of them, atomically.
 * Several processes on several hosts therefore never exceed any limit together.
 *
 * The service counts ARRIVAL times, and a request arrives between its reservation and its answer.
 * So, like core's `PlanScheduler` (`countFrom: 'settle'`), every request counts in every window
 * from its reservation until it settled: while in flight it blocks as if arriving "now", and
 * {@link RedisQuota.settle} rescores it to the Redis time of the settle (a second script). No
 * network jitter or event-loop delay can then make two requests arrive too close.
 *
 * - A worker that dies mid-request never settles. Its entry counts at `reservation +
 *   staleAfterMs + timeout + 1 s + marginMs` (the in-flight bound) once that has passed: the
 *   request left at most `staleAfterMs` after its reservation ({@link RedisQuota.lagMs}), was
 *   given up at most its timeout after leaving, and after that nothing of it travels for long;
 *   so it arrived by then, and counting it there is the latest it can count. Until then it blocks.
 *   A settle that cannot reach Redis is retried once Redis answers again.
 *
 * - Redis away (down, unreachable, timing out): nothing is reserved, so nothing starts; waiting
 *   reservations resume once Redis answers again. A reply lost in transit counts as refused (a
 *   start recorded but not made only wastes quota).
 * - Redis lost its data: the first worker to notice opens a new state generation with a hold of
 *   `lostStateHoldMs` (no start until old starts left every window); every worker re-seeds its
 *   own recent starts, its view of today's count and the participants it saw active into it
 *   before it reserves again (an idle one too: it looks every `watchIntervalMs`). Once every
 *   participant seen active has re-seeded, the hold ends after `recoveryGraceMs`; one that died
 *   with the data keeps the full hold.
 * - Within a process, reservations go live before backfill, first come first served, and an
 *   endpoint that must wait does not hold up another endpoint.
 *
 * @example
 * ```ts
 * const quota = new RedisQuota({ redis: 'redis://127.0.0.1:6379', token, limits: planLimits('premium') });
 * const reservation = await quota.reserve('kline', { priority: 'backfill' });
 * try {
 *   await fetch(url); // the request may leave now
 * } finally {
 *   void quota.settle(reservation); // it has arrived by now
 * }
 * await quota.close();
 * ```
 */
export class RedisQuota implements AsyncDisposable {
  readonly limits: PlanLimits;
  /** A reservation whose {@link lagMs} exceeds this must not be sent on (settle it unused). */
  readonly staleAfterMs: number;
  private readonly handle: RedisHandle;
  private readonly namespace: string;
  private readonly windows: SharedWindows;
  private readonly recovery: QuotaRecovery;
  private readonly holdMs: number;
  private readonly onEvent: (event: RedisQuotaEvent) => void;
  private readonly waiters: Waiter[] = [];
  /** Per endpoint: no attempt before `untilMs`; `inFlight` when a request in flight blocked it. */
  private readonly blockedUntil = new Map<EndpointKind, { untilMs: number; inFlight: boolean }>();
  /** Reservations whose settle (or whose lost acquire reply) still has to reach Redis. */
  private readonly orphans = new Map<string, { endpoint: EndpointKind; epoch: string }>();
  /** Settle calls under way (close waits for them). */
  private readonly settling = new Set<Promise<void>>();
  private readonly nonce = randomUUID().slice(0, 8);
  private sequence = 0;
  private readonly settlePollMs: number;
  private readonly boundMs: Record<'request' | 'suspension', number>;
  private readonly keyTtlExtraMs: number;
  private readonly graceMs: number;
  /** This process's id among the token's participants (random; nothing of the token). */
  private readonly participant = randomUUID();
  /** How long a start matters to a sliding window, in ms (longest window plus in-flight bound). */
  private readonly horizonMs: number;
  private readonly watchTimer: NodeJS.Timeout;
  private watching = false;
  private reseeding: { epoch: string; done: Promise<void> } | undefined;
  private epoch = '';
  private running = false;
  private wake: (() => void) | undefined;
  private readonly closeController = new AbortController();
  private closing: Promise<void> | undefined;
  private reserved = 0;
  private refusedAttempts = 0;
  private available = true;
  private downSinceMs = 0;
  private remindedAtMs = 0;
  private outages = 0;
  private outageMs = 0;

  /** @throws ClusterError `QF_INVALID_OPTION` for a bad option. */
  constructor(options: RedisQuotaOptions) {
    const marginMs = options.marginMs ?? REDIS_QUOTA_DEFAULTS.marginMs;
    const timeZone = options.dailyResetTimeZone ?? REDIS_QUOTA_DEFAULTS.dailyResetTimeZone;
    const commandTimeoutMs = options.commandTimeoutMs ?? REDIS_QUOTA_DEFAULTS.commandTimeoutMs;
    const staleAfterMs = options.staleAfterMs ?? REDIS_QUOTA_DEFAULTS.staleAfterMs;
    const settlePollMs = options.settlePollMs ?? REDIS_QUOTA_DEFAULTS.settlePollMs;
    const requestMs = options.timeouts?.requestMs ?? REDIS_QUOTA_DEFAULTS.timeouts.requestMs;
    const suspensionMs = options.timeouts?.suspensionMs ?? REDIS_QUOTA_DEFAULTS.timeouts.suspensionMs;
    const fail = (message: string): never => {
      throw new ClusterError('QF_INVALID_OPTION', `RedisQuota: ${message}`);
    };
    if (typeof options.token !== 'string' || options.token === '') fail('"token" must be a non-empty string');
    if (!(marginMs >= 0) || !Number.isFinite(marginMs))
      fail(`"marginMs" must be a finite number >= 0, got ${marginMs}`);
    if (!(commandTimeoutMs > 0)) fail(`"commandTimeoutMs" must be > 0, got ${commandTimeoutMs}`);
    if (!(staleAfterMs >= 0) || !Number.isFinite(staleAfterMs))
      fail(`"staleAfterMs" must be a finite number >= 0, got ${staleAfterMs}`);
    if (!(settlePollMs >= 1) || !Number.isFinite(settlePollMs))
      fail(`"settlePollMs" must be a finite number >= 1, got ${settlePollMs}`);
    for (const [name, ms] of [
      ['timeouts.requestMs', requestMs],
      ['timeouts.suspensionMs', suspensionMs],
    ] as const) {
      if (!(ms > 0) || !Number.isFinite(ms)) fail(`"${name}" must be a finite number > 0, got ${ms}`);
    }
    try {
      new Intl.DateTimeFormat('en-US', { timeZone });
    } catch {
      fail(`"dailyResetTimeZone" must be an IANA time zone, got ${JSON.stringify(timeZone)}`);
    }
    this.limits = options.limits;
    this.namespace = tokenNamespace(options.keyPrefix ?? REDIS_QUOTA_DEFAULTS.keyPrefix, options.token);
    this.staleAfterMs = staleAfterMs;
    this.settlePollMs = Math.ceil(settlePollMs);
    const bound = (timeoutMs: number) => Math.ceil(staleAfterMs + timeoutMs + AFTER_TIMEOUT_MS + marginMs);
    this.boundMs = { request: bound(requestMs), suspension: bound(suspensionMs) };
    // A key matters until its newest entry (scored up to one bound ahead) has left the window.
    this.keyTtlExtraMs = Math.max(this.boundMs.request, this.boundMs.suspension) + 1_000;
    const dailyWindow = options.dailyWindow ?? REDIS_QUOTA_DEFAULTS.dailyWindow;
    if (!(['calendar', 'rolling', 'both'] as const).includes(dailyWindow))
      fail(`"dailyWindow" must be 'calendar', 'rolling' or 'both', got ${JSON.stringify(dailyWindow)}`);
    this.windows = new SharedWindows(
      this.namespace,
      options.limits,
      marginMs,
      timeZone,
      dailyWindow,
      Math.max(this.boundMs.request, this.boundMs.suspension),
    );
    this.holdMs = options.lostStateHoldMs ?? this.windows.longestSlidingMs;
    if (!(this.holdMs >= 0)) fail(`"lostStateHoldMs" must be >= 0, got ${this.holdMs}`);
    this.graceMs = options.recoveryGraceMs ?? REDIS_QUOTA_DEFAULTS.recoveryGraceMs;
    if (!(this.graceMs >= 0) || !Number.isFinite(this.graceMs))
      fail(`"recoveryGraceMs" must be a finite number >= 0, got ${this.graceMs}`);
    const watchMs = options.watchIntervalMs ?? REDIS_QUOTA_DEFAULTS.watchIntervalMs;
    if (!(watchMs >= 10) || !Number.isFinite(watchMs))
      fail(`"watchIntervalMs" must be a finite number >= 10, got ${watchMs}`);
    this.horizonMs = this.windows.longestSlidingMs + Math.max(this.boundMs.request, this.boundMs.suspension);
    this.onEvent = options.onEvent ?? (() => undefined);
    this.handle = openRedis(options.redis, commandTimeoutMs);
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
    this.watchTimer = setInterval(() => void this.watch(), watchMs);
    this.watchTimer.unref();
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Resolves when Redis answers a PING (within the command timeout); rejects otherwise. */
  async ping(): Promise<void> {
    await this.handle.client.ping();
  }

  /**
   * Resolves once one start of `endpoint` is recorded in the shared quota: the request may leave
   * now. Waits while a rule, a shared pause or Redis being away blocks. Rejects with the signal's
   * reason when `signal` aborts first, and with `ClusterError` `QF_CLUSTER_CLOSED` on close.
   */
  reserve(
    endpoint: EndpointKind,
    options: { readonly priority?: Priority; readonly signal?: AbortSignal } = {},
  ): Promise<Reservation> {
    if (this.closed) return Promise.reject(closedError());
    const signal = options.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<Reservation>((resolve, reject) => {
      const waiter: Waiter = {
        endpoint,
        priority: options.priority ?? 'backfill',
        signal,
        resolve,
        reject,
        onAbort: undefined,
      };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.kick();
    });
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
      // Redis away: no reservation succeeds until it is back, which pauses every worker anyway.
    }
  }

  /**
   * The request of `reservation` settled: its answer or failure came back (so it has arrived by
   * now), or it was never sent. Its entries are rescored to the Redis time of this call. Call
   * exactly once per reservation; never rejects (a settle that cannot reach Redis is retried
   * once Redis answers again, and until then the entry blocks, up to its in-flight bound).
   */
  settle(reservation: Reservation): Promise<void> {
    const done = this.settleNow(reservation.id, reservation.endpoint, this.epoch).then(() => {
      this.settling.delete(done);
    });
    this.settling.add(done);
    // Own waiters blocked by a request in flight may go now; others poll for it.
    let woke = false;
    for (const [endpoint, block] of this.blockedUntil) {
      if (block.inFlight) {
        this.blockedUntil.delete(endpoint);
        woke = true;
      }
    }
    if (woke) this.wake?.();
    return done;
  }

  /**
   * How late a start would be now, in ms, against the instant Redis recorded its reservation:
   * local time minus the reservation's server time, less the smallest such difference seen lately
   * (clock offset plus the fastest round trip). A worker whose event loop stalled between the
   * reservation and the send sees a large lag and must not send on that reservation.
   */
  lagMs(reservation: Reservation): number {
    const offset = Math.min(...this.offsets);
    return Math.max(0, Date.now() - reservation.serverMs - offset);
  }

  stats(): RedisQuotaStats {
    return {
      reserved: this.reserved,
      waiting: this.waiters.length,
      refusedAttempts: this.refusedAttempts,
      redisAvailable: this.available,
      outages: this.outages,
      outageMs: this.outageMs + (this.available ? 0 : Date.now() - this.downSinceMs),
      epoch: this.epoch === '' ? undefined : this.epoch,
    };
  }

  /**
   * Rejects every waiting reservation with `QF_CLUSTER_CLOSED`, waits for settles under way, and
   * closes an owned connection. Settle every reservation first: one settled after close counts
   * until its in-flight bound. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closeController.abort();
    clearInterval(this.watchTimer);
    const error = closedError();
    for (const waiter of this.waiters.splice(0)) this.finishWaiter(waiter, () => waiter.reject(error));
    this.wake?.();
    this.closing = (async () => {
      await Promise.all([...this.settling]);
      if (this.orphans.size > 0) await this.flushOrphans();
      await closeRedis(this.handle);
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private kick(): void {
    if (this.running) {
      this.wake?.();
      return;
    }
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
      if (!this.closed && this.waiters.length > 0) this.kick();
    });
  }

  /** One reservation attempt at a time per process, in priority order. */
  private async loop(): Promise<void> {
    while (!this.closed && this.waiters.length > 0) {
      const now = Date.now();
      const waiter = this.next(now);
      if (waiter === undefined) {
        let until = Number.POSITIVE_INFINITY;
        for (const w of this.waiters)
          until = Math.min(until, this.blockedUntil.get(w.endpoint)?.untilMs ?? now);
        await this.sleep(Math.max(1, until - now));
        continue;
      }
      const id = `${this.nonce}.${++this.sequence}`;
      let reply: AcquireReply;
      const specs = this.windows.at(waiter.endpoint, Date.now());
      try {
        reply = await this.acquire(waiter.endpoint, id, specs);
      } catch (error) {
        // The reply may be lost after the script recorded the request: settle it once Redis is back.
        if (this.epoch !== '') this.orphans.set(id, { endpoint: waiter.endpoint, epoch: this.epoch });
        await this.redisUnavailable(error);
        continue;
      }
      this.redisAvailable();
      if (this.orphans.size > 0) await this.flushOrphans();
      if (reply[0] === 1) {
        this.blockedUntil.delete(waiter.endpoint);
        this.recovery.recordStart(waiter.endpoint, id, reply[2], specs, this.boundOf(waiter.endpoint));
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        this.reserved++;
        this.noteOffset(reply[2]);
        const reservation: Reservation = { serverMs: reply[2], endpoint: waiter.endpoint, id };
        if (this.closed)
          void this.settle(reservation); // closed meanwhile: nobody will send it
        else this.finishWaiter(waiter, () => waiter.resolve(reservation));
      } else if (reply[0] === 0) {
        this.refusedAttempts++;
        this.noteOffset(reply[2]);
        // The wait is measured on the server's clock; a local sleep of the same length is enough.
        this.blockedUntil.set(waiter.endpoint, {
          untilMs: Date.now() + reply[1] + (reply[3] === 1 ? 0 : 1),
          inFlight: reply[3] === 1,
        });
      } else {
        try {
          await this.reseed(String(reply[1]));
        } catch (error) {
          await this.redisUnavailable(error);
        }
      }
    }
  }

  /** The first waiter in priority order whose endpoint is not known to be blocked. */
  private next(now: number): Waiter | undefined {
    for (const priority of PRIORITIES) {
      for (const w of this.waiters) {
        if (w.priority === priority && (this.blockedUntil.get(w.endpoint)?.untilMs ?? 0) <= now) return w;
      }
    }
    return undefined;
  }

  private async acquire(endpoint: EndpointKind, id: string, specs: SharedSpecs): Promise<AcquireReply> {
    const { sliding, buckets, rolling } = specs;
    const keys = [
      `${this.namespace}:quota:epoch`,
      `${this.namespace}:quota:pause`,
      `${this.namespace}:quota:seq`,
      `${this.namespace}:quota:members`,
      `${this.namespace}:quota:expected`,
      `${this.namespace}:quota:reseeded`,
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
      this.boundOf(endpoint),
      this.settlePollMs,
      this.participant,
      Math.ceil(this.graceMs),
      Math.ceil(this.horizonMs),
      rolling.length,
    ];
    for (const s of sliding) args.push(s.windowMs, s.limit, s.windowMs + this.keyTtlExtraMs);
    for (const b of buckets) args.push(b.limit, b.endsAtMs);
    for (const r of rolling) args.push(r.windowMs, r.limit, r.slotMs);
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

  /** The in-flight bound of a request of `endpoint`, in ms after its reservation (see the class). */
  private boundOf(endpoint: EndpointKind): number {
    return endpoint === 'suspension' ? this.boundMs.suspension : this.boundMs.request;
  }

  /** Runs the settle script for `id`; on failure keeps it for {@link flushOrphans}. Never rejects. */
  private async settleNow(id: string, endpoint: EndpointKind, epoch: string): Promise<void> {
    const keys = [`${this.namespace}:quota:epoch`, ...this.windows.sliding(endpoint).map((s) => s.key)];
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
      if (this.handle.client.status !== 'end') this.orphans.set(id, { endpoint, epoch });
    }
  }

  /** Retries the settles that could not reach Redis (and reservations whose reply was lost). */
  private async flushOrphans(): Promise<void> {
    for (const [id, orphan] of [...this.orphans]) {
      this.orphans.delete(id);
      await this.settleNow(id, orphan.endpoint, orphan.epoch);
    }
  }

  /** Local receive time minus server time of recent replies (their minimum is the baseline). */
  private offsets: number[] = [];

  private noteOffset(serverMs: number): void {
    this.offsets.push(Date.now() - serverMs);
    if (this.offsets.length > 64) this.offsets.shift();
  }

  /**
   * Adopts a new state generation: writes this worker's recent starts, its view of the day's count
   * and the participants it saw active into it (they must re-seed too before the hold ends early).
   * One re-seed per generation at a time (the loop and the watch may both notice the loss).
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
    if (hadEpoch) this.onEvent({ type: 'state-reset', atMs: Date.now(), epoch });
  }

  /**
   * Every {@link RedisQuotaOptions.watchIntervalMs}: reads which participants are active and the
   * day's count (what a re-seed needs), and re-seeds at once when the data was lost, also while
   * this worker has nothing to send. Redis being away is the loop's business: a failed look is
   * simply skipped.
   */
  private async watch(): Promise<void> {
    if (this.watching || this.closed || this.epoch === '') return;
    this.watching = true;
    try {
      const epoch = await this.recovery.watch(this.epoch);
      if (epoch !== this.epoch) await this.reseed(epoch);
    } catch {
      // Redis away or the reply lost: the next look, or the loop, deals with it.
    } finally {
      this.watching = false;
    }
  }

  private async redisUnavailable(error: unknown): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    if (this.available) {
      this.available = false;
      this.downSinceMs = this.remindedAtMs = now;
      this.outages++;
      this.onEvent({ type: 'redis-unavailable', atMs: now, error: describe(error) });
    } else if (now - this.remindedAtMs >= REDIS_UNAVAILABLE_REMINDER_MS) {
      // Requests wait while Redis is away: say so every few seconds, not once.
      this.remindedAtMs = now;
      this.onEvent({
        type: 'redis-unavailable',
        atMs: now,
        error: describe(error),
        downMs: now - this.downSinceMs,
      });
    }
    // Wait for the connection to come back, but re-try at least every second: a timed-out
    // command leaves the connection "ready" although Redis does not answer.
    await whenReady(this.handle.client, this.closeController.signal, 1_000);
    await this.sleep(50);
  }

  private redisAvailable(): void {
    if (this.available) return;
    this.available = true;
    const now = Date.now();
    this.outageMs += now - this.downSinceMs;
    this.onEvent({ type: 'redis-available', atMs: now, downMs: now - this.downSinceMs });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private finishWaiter(waiter: Waiter, settle: () => void): void {
    if (waiter.onAbort !== undefined) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    settle();
  }
}

function closedError(): ClusterError {
  return new ClusterError(
    'QF_CLUSTER_CLOSED',
    'shared quota: closed before the request could be reserved; create a new one',
  );
}

/** An error's message without anything that could carry a secret (ioredis messages name host:port only). */
function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
