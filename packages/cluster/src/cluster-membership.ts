import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { type Clock } from '@quoteflow/core';
import { monotonicClock } from '@quoteflow/core/internal';
import { ReplaySubject, distinctUntilChanged, type Observable } from 'rxjs';
import { ClusterError } from './cluster-error.js';
import { CLAIM_SCRIPT, HEARTBEAT_SCRIPT, RELEASE_SCRIPT } from './internal/membership-scripts.js';
import {
  closeRedis,
  openRedis,
  whenReady,
  type RedisHandle,
  type RedisLike,
} from './internal/redis-connection.js';
import { tokenNamespace } from './internal/token-namespace.js';

/** Options of {@link ClusterMembership}; defaults in {@link CLUSTER_MEMBERSHIP_DEFAULTS}. */
export interface ClusterMembershipOptions {
  /** A `redis://` URL (opened and owned) or an ioredis client (adopted, not closed). */
  readonly redis: RedisLike;
  /** The token the workers share (only its hash reaches Redis). */
  readonly token: string;
  /** Names the work being shared: workers with the same token and group divide the same items. */
  readonly group: string;
  /** This worker's id, unique among live workers. @defaultValue `<host>~<pid>~<random>` */
  readonly workerId?: string;
  /** How often this worker heartbeats and reads the member set, in ms. */
  readonly heartbeatMs?: number;
  /** A worker silent for `heartbeatMs × ttlFactor` is dead; its items move to the others. */
  readonly ttlFactor?: number;
  readonly keyPrefix?: string;
  readonly commandTimeoutMs?: number;
  /**
   * What the lease is measured on and the heartbeats are paced by: a monotonic clock, so a wall
   * clock stepped back cannot lengthen the lease of a worker paused meanwhile (tests pass a clock
   * they move by hand). Not the pipeline's clock: the others judge this worker on the Redis server's
   * real time. @defaultValue {@link monotonicClock}
   */
  readonly clock?: Clock;
}

/**
 * Defaults of {@link ClusterMembershipOptions}: a dead worker is seen gone `heartbeatMs × ttlFactor` =
 * 3 s after its last heartbeat, so its items move within 3 s of its death (plus the claim).
 */
export const CLUSTER_MEMBERSHIP_DEFAULTS = {
  heartbeatMs: 1_000,
  ttlFactor: 3,
  keyPrefix: 'qf',
  commandTimeoutMs: 1_000,
} as const;

/** What one worker knows about the group. */
export interface MembershipView {
  /** Live worker ids, sorted. Empty while this worker is fenced. */
  readonly members: readonly string[];
  /**
   * True when this worker's own heartbeat may have lapsed in the others' eyes (Redis unreachable
   * for `ttl - heartbeatMs`): it must stop its items before the others take them over.
   */
  readonly fenced: boolean;
}

/**
 * Membership of one worker in a group, kept in Redis without a coordinator: every `heartbeatMs`
 * one script stamps this worker (server clock), drops workers silent for the TTL and returns the
 * live set with each one's last stamp; a member silent for more than `TTL - heartbeatMs` is
 * looked at again the moment its TTL runs out, so a dead worker is seen gone then, not up to a
 * heartbeat later. `views$` emits whenever the set changes. Items are held through {@link claim} (only
 * when free, or held by this worker, or by a dead one) and given up through {@link release}, so a
 * worker takes an item over only after its previous holder released it or died.
 *
 * @example
 * ```ts
 * const membership = new ClusterMembership({ redis: url, token, group: 'sync:1m' });
 * membership.views$.subscribe((v) => console.error('live workers', v.members));
 * membership.start();
 * ```
 */
export class ClusterMembership implements AsyncDisposable {
  readonly workerId: string;
  readonly heartbeatMs: number;
  readonly ttlMs: number;
  /** The monotonic clock of the lease and the heartbeats (see {@link ClusterMembershipOptions.clock}). */
  readonly clock: Clock;
  private readonly handle: RedisHandle;
  private readonly membersKey: string;
  private readonly ownersKey: string;
  private readonly subject = new ReplaySubject<MembershipView>(1);
  /** Hot: the latest view first, then every change. Completes on {@link close}. */
  readonly views$: Observable<MembershipView>;
  private timer: unknown;
  /** When {@link start} was called, on {@link clock}. */
  private startedAtMs: number | undefined;
  private readonly commandTimeoutMs: number;
  private lastSentOkMs = Number.NEGATIVE_INFINITY;
  /** Heartbeats lapsed long enough for the others to take this worker's items (see {@link leaseValid}). */
  private lapsed = false;
  private beating: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** @throws ClusterError `QF_INVALID_OPTION` for a bad option. */
  constructor(options: ClusterMembershipOptions) {
    const fail = (message: string): never => {
      throw new ClusterError('QF_INVALID_OPTION', `ClusterMembership: ${message}`);
    };
    this.heartbeatMs = options.heartbeatMs ?? CLUSTER_MEMBERSHIP_DEFAULTS.heartbeatMs;
    const ttlFactor = options.ttlFactor ?? CLUSTER_MEMBERSHIP_DEFAULTS.ttlFactor;
    if (!(this.heartbeatMs >= 10)) fail(`"heartbeatMs" must be >= 10, got ${this.heartbeatMs}`);
    if (!(ttlFactor >= 2)) fail(`"ttlFactor" must be >= 2, got ${ttlFactor}`);
    if (typeof options.group !== 'string' || options.group === '') fail('"group" must be a non-empty string');
    if (typeof options.token !== 'string' || options.token === '') fail('"token" must be a non-empty string');
    this.ttlMs = this.heartbeatMs * ttlFactor;
    this.clock = options.clock ?? monotonicClock;
    this.workerId = options.workerId ?? `${hostname()}~${process.pid}~${randomUUID().slice(0, 8)}`;
    const ns = tokenNamespace(options.keyPrefix ?? CLUSTER_MEMBERSHIP_DEFAULTS.keyPrefix, options.token);
    this.membersKey = `${ns}:group:${options.group}:members`;
    this.ownersKey = `${ns}:group:${options.group}:owners`;
    this.commandTimeoutMs =
      options.commandTimeoutMs ?? Math.min(CLUSTER_MEMBERSHIP_DEFAULTS.commandTimeoutMs, this.heartbeatMs);
    this.handle = openRedis(options.redis, this.commandTimeoutMs);
    const client = this.handle.client as Redis & Record<string, unknown>;
    if (typeof client.qfHeartbeat !== 'function') {
      client.defineCommand('qfHeartbeat', { numberOfKeys: 1, lua: HEARTBEAT_SCRIPT });
      client.defineCommand('qfClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
      client.defineCommand('qfRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    }
    this.views$ = this.subject.pipe(
      distinctUntilChanged((a, b) => a.fenced === b.fenced && a.members.join('\n') === b.members.join('\n')),
    );
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Whether this worker may still commit work on the items it holds: its last heartbeat is recent
   * enough that no other worker can have taken them over (half a heartbeat of the TTL to spare),
   * and no lapse was seen since {@link renewLease}. A process paused (SIGSTOP, a VM freeze) past the
   * TTL finds this false the moment it runs again, before any heartbeat; the next heartbeat then
   * fences it until the work is dropped and the lease renewed. Measured on {@link clock}: the wall
   * clock never lengthens (nor shortens) it.
   *
   * The lease runs from the send of the last heartbeat whose reply came back: the others may take
   * the items `ttlMs` after this worker's stamp, and only a confirmed stamp counts. A heartbeat
   * that gets through, but whose reply comes back more than `ttlMs - heartbeatMs / 2` after the
   * last confirmed send (2.5 s at the defaults: its timer and its round trip 1.5 s late together),
   * makes this false until the reply arrives, without a fence (sent less than `ttlMs - heartbeatMs`
   * after the previous one, it landed before the others could see this worker dead). That is the
   * lease's last half heartbeat, the margin a commit needs to finish before the earliest takeover,
   * and a stamp in flight cannot count before it is known to have landed. So it is right: a commit
   * refused then (`QF_FENCED`) is not written, and its rows are read again by whoever holds the
   * items next (this worker, after the reply). Safe, at the cost of that re-read.
   */
  leaseValid(): boolean {
    return !this.lapsed && this.clock.now() - this.lastSentOkMs < this.ttlMs - this.heartbeatMs / 2;
  }

  /**
   * After a fence: the held work was dropped (not committed), so the worker may claim again once
   * a heartbeat gets through (the lease counts from that one).
   */
  renewLease(): void {
    this.lapsed = false;
    this.lastSentOkMs = Number.NEGATIVE_INFINITY;
  }

  /**
   * Starts heartbeating: the first one as soon as the connection is up (at most a command timeout
   * from now), then every `heartbeatMs`. Idempotent.
   */
  start(): void {
    if (this.closed || this.startedAtMs !== undefined) return;
    this.startedAtMs = this.clock.now();
    // No offline queue: a heartbeat sent before the connection is up fails at once, which would
    // cost the first second of the worker's life.
    this.beating = whenReady(this.handle.client, undefined, this.commandTimeoutMs).then(() => {
      this.beating = undefined;
      if (!this.closed) this.tick();
    });
  }

  /** Claims items for this worker; resolves with those now held (see the class description). */
  async claim(items: readonly string[]): Promise<string[]> {
    if (items.length === 0 || this.closed) return [];
    const reply = await this.scripts().qfClaim(
      this.membersKey,
      this.ownersKey,
      this.workerId,
      this.ttlMs,
      ...items,
    );
    return (reply as string[]).map(String);
  }

  /** Gives up items this worker holds (call after their work was flushed). */
  async release(items: readonly string[]): Promise<number> {
    if (items.length === 0) return 0;
    return Number(await this.scripts().qfRelease(this.ownersKey, this.workerId, ...items));
  }

  /**
   * Leaves the group (others take over at once instead of after the TTL), completes `views$` and
   * closes an owned connection. Release held items first. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      await this.beating;
      try {
        await this.scripts().qfHeartbeat(this.membersKey, this.workerId, this.ttlMs, '1');
      } catch {
        // Redis away: the TTL removes this worker instead.
      }
      this.subject.complete();
      await closeRedis(this.handle);
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private tick(): void {
    this.timer = undefined;
    this.beating = this.beat().then((untilExpiryMs) => {
      this.beating = undefined;
      // A member that went silent is seen gone the moment its TTL runs out, not up to a heartbeat
      // later: its items move that much sooner (a live member's expiry is always past the next beat).
      if (!this.closed)
        this.timer = this.clock.setTimeout(() => this.tick(), Math.min(this.heartbeatMs, untilExpiryMs));
    });
  }

  /**
   * One heartbeat and the view it gives; resolves with the time until the first other member's
   * TTL runs out (Infinity when none, or when the heartbeat failed).
   */
  private async beat(): Promise<number> {
    const sentAt = this.clock.now();
    try {
      const reply = (await this.scripts().qfHeartbeat(
        this.membersKey,
        this.workerId,
        this.ttlMs,
        '0',
      )) as string[];
      // Silent for the fence threshold since the last heartbeat that got through: the others may
      // have taken this worker's items; it stays fenced until its work is dropped (renewLease).
      if (sentAt - this.lastSentOkMs >= this.ttlMs - this.heartbeatMs && Number.isFinite(this.lastSentOkMs))
        this.lapsed = true;
      this.lastSentOkMs = sentAt;
      if (this.closed) return Number.POSITIVE_INFINITY;
      const { members, oldestOtherMs } = readHeartbeatReply(reply, this.workerId);
      if (this.lapsed) this.subject.next({ members: [], fenced: true });
      else this.subject.next({ members, fenced: false });
      // Judged on the server's clock, whose "now" is the reply's first field; 1 ms past it, so the
      // beat then finds the member gone rather than a millisecond short of it.
      return Math.max(0, oldestOtherMs + this.ttlMs - Number(reply[0]) + 1);
    } catch {
      // Fence before the others may see this worker as dead (they judge by its last stamp, which
      // is no earlier than the last successful send): stop the items, take them back later. A
      // worker that never got a heartbeat through holds nothing and nobody judges it; it says so
      // only once the same time has passed since its start.
      const since = Number.isFinite(this.lastSentOkMs) ? this.lastSentOkMs : this.startedAtMs!;
      if (!this.closed && this.clock.now() - since >= this.ttlMs - this.heartbeatMs) {
        this.subject.next({ members: [], fenced: true });
      }
      return Number.POSITIVE_INFINITY;
    }
  }

  private scripts() {
    return this.handle.client as unknown as {
      qfHeartbeat(key: string, id: string, ttl: number, leaving: string): Promise<unknown>;
      qfClaim(members: string, owners: string, id: string, ttl: number, ...items: string[]): Promise<unknown>;
      qfRelease(owners: string, id: string, ...items: string[]): Promise<unknown>;
    };
  }
}

/**
 * The live members of a heartbeat's reply (`[now, member, stamp…]`), sorted, and the oldest
 * heartbeat of the others (server ms; Infinity when alone).
 */
function readHeartbeatReply(
  reply: readonly string[],
  self: string,
): { members: string[]; oldestOtherMs: number } {
  const members: string[] = [];
  let oldestOtherMs = Number.POSITIVE_INFINITY;
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const member = String(reply[i]);
    members.push(member);
    if (member !== self) oldestOtherMs = Math.min(oldestOtherMs, Number(reply[i + 1]));
  }
  return { members: members.sort(), oldestOtherMs };
}
