import type { ClusterMembership } from './cluster-membership.js';
import { ClusterSyncRun } from './internal/cluster-sync-run.js';

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

/** Options of {@link clusterSync}. */
export interface ClusterSyncOptions<S> {
  /** This worker's membership; `clusterSync` starts it and closes it at the end. */
  readonly membership: ClusterMembership;
  /** Every item of the shared work (e.g. product codes); the same list on every worker. */
  readonly items: readonly string[];
  /**
   * Items that move together: the workers divide these units (each one's share differs by at most
   * one unit) and a worker holds every item of its units. For a K-line sync, the codes one
   * `/batch-kline` request carries (`batchKlineUnits`), so that the cluster sends no more
   * requests per poll than one client. Items in no unit are units of their own; an item in two is
   * `QF_INVALID_OPTION`. The same on every worker.
   * @defaultValue every item a unit of its own
   */
  readonly units?: readonly (readonly string[])[];
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

/**
 * What {@link clusterSync} reports: each view of the member set (`members`), each change of what
 * this worker holds (`assignment`; a worker whose share is nothing, a standby, says so once), and
 * warnings.
 */
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
  /**
   * Resolves with the result of every run this worker made, after `stop()` or the signal; rejects
   * with the first failure of a run (see {@link clusterSync}).
   */
  readonly done: Promise<S[]>;
  /** Stops the current run (flushing it), releases its items, leaves the group. Idempotent. */
  stop(): Promise<S[]>;
}

/**
 * Divides `items` among the live workers of a group, without a coordinator: each worker computes
 * its share ({@link balancedShares}: rendezvous hashing with bounded loads, so shares differ by at
 * most one item, or one of `units`) over the live member set it reads from Redis, claims the items
 * of its share (an item is taken only once its previous holder released it or died), and runs
 * `run(held)`. When the member set changes and the run can change in place (`add`, `remove`), it
 * gives up the items it lost (durable first, then released) and takes the gained ones into the
 * running work, which reads only their history, from where the shared dataset ends (an item it held
 * before and gets back included); otherwise it stops the run, releases, claims and starts a new run
 * over everything held. Nothing is written twice and nothing is skipped. A fenced worker (Redis
 * unreachable) stops everything before the others may take its items over.
 *
 * A run that fails (its `done` or its `stop()` rejects, or `run` throws) ends the sync: the worker
 * releases its items, leaves, and `done` rejects with the first failure. A `QF_FENCED` failure does
 * not end it: the run's uncommitted work was dropped (its lease lapsed) and the worker goes on,
 * claiming afresh once its lease is renewed.
 *
 * Takeover after a worker dies: its heartbeat TTL after its last heartbeat (the survivors look
 * again the moment it runs out), then the claim; the history of the items taken over is read
 * beside the claims, not before the next one.
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
  const sync = new ClusterSyncRun(options);
  sync.start();
  return { done: sync.done, stop: () => sync.stop() };
}
