import type { Subscription } from 'rxjs';
import type { ClusterMembership, MembershipView } from './cluster-membership.js';
import { DepartedWorkers } from './internal/departed-workers.js';
import { FencedReminder } from './internal/fenced-reminder.js';
import { SettleGate } from './internal/settle-gate.js';
import { balancedShares } from './rendezvous.js';

/** A running piece of work over a set of items (e.g. a `klineSync` over some codes). */
export interface ShareableRun<S> {
  /** Settles when the run ends (after `stop()`, or on its own / with an error). */
  readonly done: Promise<S>;
  /** Stops the run after its in-flight work is flushed; resolves like `done`. */
  stop(): Promise<S>;
  /**
   * Takes more items into the running work without a restart (`klineSync`'s handle has it). When
   * present, a worker that only gains items (a takeover) adds them instead of restarting its run,
   * so only the gained items are fetched, from where the shared dataset ends.
   */
  add?(items: readonly string[]): Promise<void>;
  /**
   * Gives items up without a restart, resolving once their work so far is durable. With `add`,
   * a change of the member set never restarts the run.
   */
  remove?(items: readonly string[]): Promise<void>;
}

/** A worker's standing in its group, as its work needs it. */
export interface WorkLease {
  /** Whether the work may still commit (see {@link ClusterMembership.leaseValid}). */
  readonly valid: () => boolean;
  /** This worker's id (unique among the live workers). */
  readonly workerId: string;
  /**
   * Workers seen alive earlier that are no longer (dead or left), oldest departure first: whoever
   * takes over their items may fence what they left open (a Kafka transactional id, say) first.
   */
  readonly departed: () => readonly string[];
}

/** A failure that only means "this work may no longer commit" (`QF_FENCED`): not the worker's end. */
function isFenced(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if ((e as { code?: unknown }).code === 'QF_FENCED') return true;
  return false;
}

/** Options of {@link clusterSync}. */
export interface ClusterSyncOptions<S> {
  /** This worker's membership; `clusterSync` starts it and closes it at the end. */
  readonly membership: ClusterMembership;
  /** Every item of the shared work (e.g. product codes); the same list on every worker. */
  readonly items: readonly string[];
  /**
   * Starts the work over the items this worker holds (sorted). `lease.valid()` says whether the work
   * may still commit (pass it to `DatasetWriter`'s `fence`): false once this worker may have lost
   * its items (paused or cut off past its TTL). Called again when the work must restart.
   */
  readonly run: (items: readonly string[], lease: WorkLease) => ShareableRun<S>;
  /** Stops like `stop()`. */
  readonly signal?: AbortSignal;
  /** Assignment changes, for logs and for measuring takeover time. */
  readonly onEvent?: (event: ClusterSyncEvent) => void;
  /**
   * Before its first claim, a worker waits until the member set has not changed for this long
   * (capped at 3× it in all), so workers started together divide the items from the first moment
   * instead of the first one claiming everything and handing most of it over. In ms.
   * @defaultValue 1.5 × the membership's heartbeat
   */
  readonly startSettleMs?: number;
}

/** What {@link clusterSync} reports. */
export type ClusterSyncEvent =
  | {
      readonly type: 'members';
      readonly atMs: number;
      readonly members: readonly string[];
      readonly fenced: boolean;
    }
  | {
      readonly type: 'assignment';
      readonly atMs: number;
      /** Items the new run covers. */
      readonly held: readonly string[];
      readonly gained: readonly string[];
      readonly lost: readonly string[];
      /** Items this worker should hold but whose previous holder has not released them yet. */
      readonly pending: readonly string[];
    }
  | { readonly type: 'warning'; readonly atMs: number; readonly message: string; readonly error?: unknown };

/** A running {@link clusterSync}. */
export interface ClusterSyncHandle<S> {
  /** Resolves with the result of every run this worker made, after `stop()` or the signal. */
  readonly done: Promise<S[]>;
  /** Stops the current run (flushing it), releases its items, leaves the group. Idempotent. */
  stop(): Promise<S[]>;
}

/**
 * Divides `items` among the live workers of a group, without a coordinator: each worker computes
 * its share ({@link balancedShares}: rendezvous hashing with bounded loads, so shares differ by at
 * most one item) over the live member set it reads from Redis, claims the items
 * of its share (an item is taken only once its previous holder released it or died), and runs
 * `run(held)`. When the member set changes and the run can change in place (`add`, `remove`), it
 * gives up the items it lost (durable first, then released) and takes the gained ones into the
 * running work, which reads only their history, from where the shared dataset ends (an item it held
 * before and gets back included); otherwise it stops the run, releases, claims and starts a new run
 * over everything held. Nothing is written twice and nothing is skipped. A fenced worker (Redis
 * unreachable) stops everything before the others may take its items over.
 *
 * Takeover after a worker dies: its heartbeat TTL plus up to one heartbeat of the survivors; the
 * history of the items taken over is read beside the claims, not before the next one.
 *
 * @example
 * ```ts
 * const membership = new ClusterMembership({ redis: url, token, group: 'kline-sync' });
 * const cluster = clusterSync({ membership, items: codes, run: (mine) => klineSync({ client, codes: mine, klineTypes, files }) });
 * process.on('SIGTERM', () => void cluster.stop());
 * await cluster.done;
 * ```
 */
export function clusterSync<S>(options: ClusterSyncOptions<S>): ClusterSyncHandle<S> {
  const { membership, items, run } = options;
  // Waits and durations on the membership's monotonic clock; `atMs` of events is wall time, for logs.
  const clock = membership.clock;
  const results: S[] = [];
  let view: MembershipView = { members: [], fenced: false };
  let held = new Set<string>();
  let handle: ShareableRun<S> | undefined;
  let chain: Promise<void> = Promise.resolve();
  /**
   * Changes of the running work (items added, removed), one after another: an add (reading the
   * items' history) runs beside the claims; a remove waits for the adds before it.
   */
  let changes: Promise<void> = Promise.resolve();
  let queued = false;
  let retry: unknown;
  let stopped = false;
  let failure: unknown;
  let resolveDone!: (value: S[]) => void;
  let rejectDone!: (reason: unknown) => void;
  const done = new Promise<S[]>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined);

  const emit = (event: ClusterSyncEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's failure must not stop the work.
    }
  };

  // Until the member set has settled, no claim (see `startSettleMs`).
  const settle = new SettleGate(clock, options.startSettleMs ?? membership.heartbeatMs * 1.5);

  const schedule = (): void => {
    if (queued || stopped) return;
    queued = true;
    chain = chain.then(async () => {
      queued = false;
      if (!stopped) await reconcile();
    });
  };

  const stopRun = async (): Promise<void> => {
    const current = handle;
    handle = undefined;
    if (current === undefined) return;
    try {
      results.push(await current.stop());
    } catch (error) {
      // Fenced: its uncommitted rows were dropped; whoever holds the items now writes them.
      if (isFenced(error)) return;
      // Otherwise the end, as for a run that failed on its own: no new run starts after a failure,
      // so going on would hold the items with nothing running them.
      failure ??= error;
      void stop();
    }
  };

  const departures = new DepartedWorkers(membership.workerId);
  const lease: WorkLease = {
    valid: () => membership.leaseValid(),
    workerId: membership.workerId,
    departed: () => departures.list(),
  };

  const reconcile = async (): Promise<void> => {
    if (retry !== undefined) clock.clearTimeout(retry);
    retry = undefined;
    const wanted = new Set(
      view.fenced ? [] : (balancedShares(items, view.members).get(membership.workerId) ?? []),
    );
    const lost = [...held].filter((item) => !wanted.has(item));
    const missing = [...wanted].filter((item) => !held.has(item));
    if (lost.length === 0 && missing.length === 0) return renewIfDropped();
    let gained: string[] = [];
    if (missing.length > 0) {
      try {
        gained = await membership.claim(missing);
      } catch (error) {
        emit({
          type: 'warning',
          atMs: Date.now(),
          message: 'claiming items failed (Redis away?); retrying',
          error,
        });
      }
    }
    // In place when the run can (never to zero items: a fenced worker stops everything).
    const inPlace = handle?.add !== undefined && (lost.length === 0 || handle.remove !== undefined);
    if (inPlace && wanted.size > 0 && !stopped) {
      if (await changeInPlace(handle!, lost, gained, wanted)) return;
    }
    if (lost.length > 0 || gained.length > 0) {
      await stopRun();
      if (lost.length > 0) {
        try {
          await membership.release(lost);
        } catch (error) {
          emit({
            type: 'warning',
            atMs: Date.now(),
            message: 'releasing items failed; they move after the TTL',
            error,
          });
        }
      }
      held = new Set([...held].filter((item) => wanted.has(item)).concat(gained));
      const pending = [...wanted].filter((item) => !held.has(item));
      if (held.size > 0 && failure === undefined && !stopped) start([...held].sort());
      emit({ type: 'assignment', atMs: Date.now(), held: [...held].sort(), gained, lost, pending });
    }
    if ([...wanted].some((item) => !held.has(item)))
      retry = clock.setTimeout(schedule, membership.heartbeatMs);
    renewIfDropped();
  };

  // Fenced and holding nothing any more: the next heartbeat that gets through starts a new lease.
  const renewIfDropped = (): void => {
    if (view.fenced && held.size === 0 && handle === undefined) membership.renewLease();
  };

  /**
   * Applies an assignment change to the running work without a restart: removes the lost items
   * (durable before they are released), adds the gained ones. False when the run refused (it
   * stopped meanwhile, say): the caller restarts it over everything held.
   */
  const changeInPlace = async (
    current: ShareableRun<S>,
    lost: string[],
    gained: string[],
    wanted: Set<string>,
  ): Promise<boolean> => {
    try {
      if (lost.length > 0) {
        const removing = changes.then(() => current.remove!(lost));
        changes = removing.catch(() => undefined);
        await removing;
        held = new Set([...held].filter((item) => wanted.has(item)));
        await membership.release(lost).catch((error: unknown) =>
          emit({
            type: 'warning',
            atMs: Date.now(),
            message: 'releasing items failed; they move after the TTL',
            error,
          }),
        );
      }
      // Held from here (claimed, the run takes them): reported before their history is read.
      held = new Set([...held, ...gained]);
      const pending = [...wanted].filter((item) => !held.has(item));
      emit({ type: 'assignment', atMs: Date.now(), held: [...held].sort(), gained, lost, pending });
      if (pending.length > 0) retry = clock.setTimeout(schedule, membership.heartbeatMs);
      // Not awaited: the claim of the rest of a dead worker's items (at the next heartbeat) must not
      // wait for the history of these.
      if (gained.length > 0) changes = changes.then(() => addInPlace(current, gained));
    } catch (error) {
      emit({
        type: 'warning',
        atMs: Date.now(),
        message: 'changing the running work failed; restarting it',
        error,
      });
      return false;
    }
    return true;
  };

  const addInPlace = async (current: ShareableRun<S>, gained: string[]): Promise<void> => {
    if (handle !== current || stopped) return;
    try {
      await current.add!(gained);
    } catch (error) {
      if (handle !== current || stopped) return; // stopped or restarted meanwhile: nothing to mend
      emit({
        type: 'warning',
        atMs: Date.now(),
        message: 'adding items to the running work failed; restarting it',
        error,
      });
      chain = chain.then(async () => {
        if (handle !== current || stopped) return;
        await stopRun();
        if (held.size > 0 && failure === undefined && !stopped) start([...held].sort());
      });
    }
  };

  const start = (mine: string[]): void => {
    let current: ShareableRun<S>;
    try {
      current = run(mine, lease);
    } catch (error) {
      // Ends like a run that failed: thrown on, it would break the chain of reconciles for good,
      // leaving the claimed items held with nothing running them.
      failure ??= error;
      void stop();
      return;
    }
    handle = current;
    current.done.then(
      (value) => {
        if (handle !== current) return; // stopped by us: stopRun collected it
        handle = undefined;
        results.push(value);
      },
      (error: unknown) => {
        if (handle !== current) return;
        handle = undefined;
        if (isFenced(error)) {
          // The lease lapsed under the run: drop what it held and claim afresh once renewed.
          emit({
            type: 'warning',
            atMs: Date.now(),
            message: 'the lease lapsed; uncommitted work dropped, rejoining',
            error,
          });
          const dropped = [...held];
          held = new Set();
          void membership.release(dropped).catch(() => undefined);
          schedule();
          return;
        }
        failure ??= error;
        void stop();
      },
    );
  };

  const reminder = new FencedReminder(clock, (message) =>
    emit({ type: 'warning', atMs: Date.now(), message }),
  );

  let subscription: Subscription | undefined;
  let stopping: Promise<S[]> | undefined;
  const stop = (): Promise<S[]> => {
    if (stopping !== undefined) return stopping;
    stopping = (async () => {
      stopped = true;
      subscription?.unsubscribe();
      if (retry !== undefined) clock.clearTimeout(retry);
      settle.cancel();
      reminder.stop();
      options.signal?.removeEventListener('abort', onAbort);
      await chain.catch(() => undefined);
      await stopRun();
      await changes;
      try {
        await membership.release([...held]);
      } catch {
        // Redis away: the TTL frees them.
      }
      held = new Set();
      await membership.close();
      if (failure !== undefined) rejectDone(failure);
      else resolveDone(results);
      return done;
    })();
    // A failure reaches the caller through `done` (and through stop() to one who called it): the
    // stops begun inside (a failed run, the signal) must not leave an unhandled rejection, which
    // would end the process before its owner could shut down in order.
    stopping.catch(() => undefined);
    return stopping;
  };
  const onAbort = (): void => void stop();

  if (options.signal?.aborted === true) {
    void stop();
  } else {
    options.signal?.addEventListener('abort', onAbort, { once: true });
    subscription = membership.views$.subscribe((v) => {
      view = v;
      departures.note(v);
      emit({ type: 'members', atMs: Date.now(), members: v.members, fenced: v.fenced });
      // A fence stops the work at once; otherwise the first claim waits for the set to settle.
      if (v.fenced) schedule();
      else settle.afterSettling(schedule);
      if (v.fenced && !stopped) reminder.start();
      else reminder.stop();
    });
    membership.start();
  }
  return { done, stop };
}
