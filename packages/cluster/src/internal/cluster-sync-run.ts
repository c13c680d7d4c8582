import type { Subscription } from 'rxjs';
import { type Clock } from '@quoteflow/core';
import { isQuoteflowError } from '@quoteflow/core/internal';
import type { ClusterMembership, MembershipView } from '../cluster-membership.js';
import type { ClusterSyncEvent, ClusterSyncOptions, ShareableRun, WorkLease } from '../cluster-sync.js';
import { DepartedWorkers } from './departed-workers.js';
import { FencedReminder } from './fenced-reminder.js';
import { SettleGate } from './settle-gate.js';
import { UnitDivision } from './unit-division.js';

/** A failure that only means "this work may no longer commit" (`QF_FENCED`): not the worker's end. */
function isFenced(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if (isQuoteflowError(e, 'QF_FENCED')) return true;
  return false;
}

/**
 * `change` of the run `current`, settled at the latest when the run ends: a run that ended (fenced,
 * failed, stopped) applies no more changes, and one it left pending must not hold up the changes
 * after it (they wait in line), which would leave this worker's reconciles stuck for good.
 */
function whileRunning(current: ShareableRun<unknown>, change: Promise<void>): Promise<void> {
  return Promise.race([
    change,
    current.done.then(
      () => Promise.reject(new Error('the run ended before the change was applied')),
      (cause: unknown) => Promise.reject(new Error('the run ended before the change was applied', { cause })),
    ),
  ]);
}

/**
 * One worker's part in a `clusterSync` (see there for the behaviour): it follows the membership's
 * views, claims and releases its share of the items, and keeps one run of the work over the items
 * it holds, changed in place when the run can and restarted otherwise. Reconciles run one after
 * another on `chain`; changes of the running work one after another on `changes`.
 */
export class ClusterSyncRun<S> {
  /** Resolves with the result of every run after the stop; rejects with the first failure. */
  readonly done: Promise<S[]>;
  private readonly options: ClusterSyncOptions<S>;
  private readonly membership: ClusterMembership;
  /** Waits and durations on the membership's monotonic clock; `atMs` of events is wall time, for logs. */
  private readonly clock: Clock;
  private readonly results: S[] = [];
  private readonly departures: DepartedWorkers;
  private readonly lease: WorkLease;
  /** Until the member set has settled, no claim (see `startSettleMs`). */
  private readonly settle: SettleGate;
  private readonly reminder: FencedReminder;
  private readonly division: UnitDivision;
  private view: MembershipView = { members: [], fenced: false };
  /** Items claimed for this worker and given to the work. */
  private held = new Set<string>();
  /** The running work over `held`, if any. */
  private work: ShareableRun<S> | undefined;
  private chain: Promise<void> = Promise.resolve();
  /**
   * Changes of the running work (items added, removed), one after another: an add (reading the
   * items' history) runs beside the claims; a remove waits for the adds before it.
   */
  private changes: Promise<void> = Promise.resolve();
  /** A reconcile waits on the chain and has not begun: it will read the latest view. */
  private queued = false;
  /** The next claim of items wanted but still held elsewhere. */
  private retry: unknown;
  private stopped = false;
  /** An assignment was reported (a standby reports its empty share once). */
  private reported = false;
  private failure: unknown;
  private subscription: Subscription | undefined;
  private stopping: Promise<S[]> | undefined;
  private resolveDone!: (value: S[]) => void;
  private rejectDone!: (reason: unknown) => void;
  private readonly onAbort = (): void => void this.stop();

  constructor(options: ClusterSyncOptions<S>) {
    this.options = options;
    this.membership = options.membership;
    this.clock = options.membership.clock;
    this.done = new Promise<S[]>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined);
    this.division = new UnitDivision(options.items, options.units);
    this.departures = new DepartedWorkers(this.membership.workerId);
    this.lease = {
      valid: () => this.membership.leaseValid(),
      workerId: this.membership.workerId,
      departed: () => this.departures.list(),
    };
    this.settle = new SettleGate(this.clock, options.startSettleMs ?? this.membership.heartbeatMs * 1.5);
    this.reminder = new FencedReminder(this.clock, (message) =>
      this.emit({ type: 'warning', atMs: Date.now(), message }),
    );
  }

  /** Follows the membership's views and starts heartbeating; stops at once if the signal aborted. */
  start(): void {
    const { signal } = this.options;
    if (signal?.aborted === true) {
      void this.stop();
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.subscription = this.membership.views$.subscribe((view) => this.onView(view));
    this.membership.start();
  }

  /** Stops the current run (flushing it), releases its items, leaves the group. Idempotent. */
  stop(): Promise<S[]> {
    if (this.stopping !== undefined) return this.stopping;
    this.stopping = this.stopOnce();
    // A failure reaches the caller through `done` (and through stop() to one who called it): the
    // stops begun inside (a failed run, the signal) must not leave an unhandled rejection, which
    // would end the process before its owner could shut down in order.
    this.stopping.catch(() => undefined);
    return this.stopping;
  }

  /** The stop: after the reconciles under way, flushes the run and the changes, releases, leaves. */
  private async stopOnce(): Promise<S[]> {
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.cancelRetry();
    this.settle.cancel();
    this.reminder.stop();
    this.options.signal?.removeEventListener('abort', this.onAbort);
    await this.chain.catch(() => undefined);
    await this.stopWork();
    await this.changes;
    try {
      await this.membership.release([...this.held]);
    } catch {
      // Redis away: the TTL frees them.
    }
    this.held = new Set();
    await this.membership.close();
    if (this.failure !== undefined) this.rejectDone(this.failure);
    else this.resolveDone(this.results);
    return this.done;
  }

  /** A change of the member set (or of the fence) as this worker sees it. */
  private onView(view: MembershipView): void {
    this.view = view;
    this.departures.note(view);
    this.emit({ type: 'members', atMs: Date.now(), members: view.members, fenced: view.fenced });
    // A fence stops the work at once; otherwise the first claim waits for the set to settle.
    if (view.fenced) this.schedule();
    else this.settle.afterSettling(() => this.schedule());
    if (view.fenced && !this.stopped) this.reminder.start();
    else this.reminder.stop();
  }

  /** Queues a reconcile, unless one is queued already (it reads the view when it begins). */
  private schedule(): void {
    if (this.queued || this.stopped) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (!this.stopped) await this.reconcile();
    });
  }

  /** Brings the held items and the running work to this worker's share of the latest view. */
  private async reconcile(): Promise<void> {
    this.cancelRetry();
    const wanted = this.wanted();
    const lost = [...this.held].filter((item) => !wanted.has(item));
    const missing = [...wanted].filter((item) => !this.held.has(item));
    if (lost.length === 0 && missing.length === 0) {
      // A worker whose share is nothing (it stands by) says so once, as every other one says its share.
      if (!this.reported && !this.view.fenced && this.view.members.length > 0)
        this.reportAssignment([], [], wanted);
      return this.renewIfDropped();
    }
    const gained = await this.claim(missing);
    // In place when the run can (never to zero items: a fenced worker stops everything).
    const current = this.work;
    const inPlace = current?.add !== undefined && (lost.length === 0 || current.remove !== undefined);
    if (inPlace && wanted.size > 0 && !this.stopped) {
      if (await this.changeInPlace(current, lost, gained, wanted)) return;
    }
    if (lost.length > 0 || gained.length > 0) await this.restart(lost, gained, wanted);
    if ([...wanted].some((item) => !this.held.has(item))) this.retryAtNextHeartbeat();
    this.renewIfDropped();
  }

  /** This worker's share of the items in the latest view: none while fenced. */
  private wanted(): Set<string> {
    const { view, membership } = this;
    return view.fenced ? new Set() : this.division.shareOf(view.members, membership.workerId);
  }

  /** Claims `missing`; resolves with those now held (none when Redis did not answer). */
  private async claim(missing: string[]): Promise<string[]> {
    if (missing.length === 0) return [];
    try {
      return await this.membership.claim(missing);
    } catch (error) {
      this.warn('claiming items failed (Redis away?); retrying', error);
      return [];
    }
  }

  /**
   * Applies an assignment change to the running work without a restart: removes the lost items
   * (durable before they are released), adds the gained ones. False when the run refused (it
   * stopped meanwhile, say): the caller restarts it over everything held.
   */
  private async changeInPlace(
    current: ShareableRun<S>,
    lost: string[],
    gained: string[],
    wanted: Set<string>,
  ): Promise<boolean> {
    try {
      if (lost.length > 0) {
        const removing = this.changes.then(() => whileRunning(current, current.remove!(lost)));
        this.changes = removing.catch(() => undefined);
        await removing;
        this.held = new Set([...this.held].filter((item) => wanted.has(item)));
        await this.release(lost);
      }
      // Held from here (claimed, the run takes them): reported before their history is read.
      this.held = new Set([...this.held, ...gained]);
      const pending = this.reportAssignment(gained, lost, wanted);
      if (pending.length > 0) this.retryAtNextHeartbeat();
      // Not awaited: the claim of the rest of a dead worker's items (at the next heartbeat) must not
      // wait for the history of these.
      if (gained.length > 0) this.changes = this.changes.then(() => this.addInPlace(current, gained));
    } catch (error) {
      // A run that ended meanwhile is not worth a warning: its end is handled where it is seen.
      if (this.work === current) this.warn('changing the running work failed; restarting it', error);
      return false;
    }
    return true;
  }

  /** Adds gained items to the running work (after the changes before); restarts it if that fails. */
  private async addInPlace(current: ShareableRun<S>, gained: string[]): Promise<void> {
    if (this.work !== current || this.stopped) return;
    try {
      await whileRunning(current, current.add!(gained));
    } catch (error) {
      if (this.work !== current || this.stopped) return; // stopped or restarted meanwhile: nothing to mend
      this.warn('adding items to the running work failed; restarting it', error);
      this.chain = this.chain.then(async () => {
        if (this.work !== current || this.stopped) return;
        await this.stopWork();
        this.startWorkOverHeld();
      });
    }
  }

  /**
   * Applies an assignment change by a restart: stops the run (flushing it), then releases the lost
   * items, and starts a new run over everything held.
   */
  private async restart(lost: string[], gained: string[], wanted: Set<string>): Promise<void> {
    await this.stopWork();
    if (lost.length > 0) await this.release(lost);
    this.held = new Set([...this.held].filter((item) => wanted.has(item)).concat(gained));
    this.startWorkOverHeld();
    this.reportAssignment(gained, lost, wanted);
  }

  /** Emits the assignment of the held items; returns the wanted items still held elsewhere. */
  private reportAssignment(gained: string[], lost: string[], wanted: Set<string>): string[] {
    const pending = [...wanted].filter((item) => !this.held.has(item));
    this.reported = true;
    this.emit({ type: 'assignment', atMs: Date.now(), held: [...this.held].sort(), gained, lost, pending });
    return pending;
  }

  /** Gives items up; when Redis does not answer, they move after the TTL. */
  private async release(items: string[]): Promise<void> {
    try {
      await this.membership.release(items);
    } catch (error) {
      this.warn('releasing items failed; they move after the TTL', error);
    }
  }

  /** Claims what is still held elsewhere again at the next heartbeat. */
  private retryAtNextHeartbeat(): void {
    this.retry = this.clock.setTimeout(() => this.schedule(), this.membership.heartbeatMs);
  }

  /** Drops the next claim: the reconcile now under way (or the stop) supersedes it. */
  private cancelRetry(): void {
    if (this.retry !== undefined) this.clock.clearTimeout(this.retry);
    this.retry = undefined;
  }

  /** Fenced and holding nothing any more: the next heartbeat that gets through starts a new lease. */
  private renewIfDropped(): void {
    if (this.view.fenced && this.held.size === 0 && this.work === undefined) this.membership.renewLease();
  }

  /** A new run over everything held, unless nothing is held or the sync is ending. */
  private startWorkOverHeld(): void {
    if (this.held.size > 0 && this.failure === undefined && !this.stopped)
      this.startWork([...this.held].sort());
  }

  /** Starts a run over `mine` and follows how it ends. */
  private startWork(mine: string[]): void {
    const { run } = this.options;
    let current: ShareableRun<S>;
    try {
      current = run(mine, this.lease);
    } catch (error) {
      // Ends like a run that failed: thrown on, it would break the chain of reconciles for good,
      // leaving the claimed items held with nothing running them.
      this.fail(error);
      return;
    }
    this.work = current;
    current.done.then(
      (value) => {
        if (this.work !== current) return; // stopped by us: stopWork collected it
        this.work = undefined;
        this.results.push(value);
      },
      (error: unknown) => this.onWorkFailed(current, error),
    );
  }

  /** A run ended on its own with `error`: fenced, its work is dropped and rejoined; else the end. */
  private onWorkFailed(current: ShareableRun<S>, error: unknown): void {
    if (this.work !== current) return;
    this.work = undefined;
    if (!isFenced(error)) return this.fail(error);
    // The lease lapsed under the run: drop what it held and claim afresh once renewed.
    this.warn('the lease lapsed; uncommitted work dropped, rejoining', error);
    const dropped = [...this.held];
    this.held = new Set();
    void this.membership.release(dropped).catch(() => undefined);
    this.schedule();
  }

  /** Stops the running work, flushing it, and keeps its result. */
  private async stopWork(): Promise<void> {
    const current = this.work;
    this.work = undefined;
    if (current === undefined) return;
    try {
      this.results.push(await current.stop());
    } catch (error) {
      // Fenced: its uncommitted rows were dropped; whoever holds the items now writes them.
      if (isFenced(error)) return;
      // Otherwise the end, as for a run that failed on its own: no new run starts after a failure,
      // so going on would hold the items with nothing running them.
      this.fail(error);
    }
  }

  /** Ends the sync: it stops, and `done` rejects with the first failure. */
  private fail(error: unknown): void {
    this.failure ??= error;
    void this.stop();
  }

  /** A `warning` event about `error`. */
  private warn(message: string, error: unknown): void {
    this.emit({ type: 'warning', atMs: Date.now(), message, error });
  }

  /** Hands an event to `onEvent`. */
  private emit(event: ClusterSyncEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure must not stop the work.
    }
  }
}
