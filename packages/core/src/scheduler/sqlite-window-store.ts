import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { InvalidOptionError } from '../errors.js';
import { IN_FLIGHT_BOUND_MS } from './in-flight-bound.js';
import { systemMachineTime, type MachineTime } from './internal/machine-time.js';
import { rollingEarliest, slotEndOf } from './internal/slot-counts.js';
import {
  immediate,
  isBusy,
  openWindowDb,
  prepareWindowStatements,
  dropImpossibleFuture,
  reanchorAfterReboot,
  type WindowStatements,
} from './internal/sqlite-window-db.js';
import { quoteflowStateDir } from './quoteflow-state-dir.js';
import type {
  AcquireResult,
  SlidingWindowSpec,
  StartTicket,
  WindowSpec,
  WindowStore,
} from './window-store.js';

/** Options of {@link SqliteWindowStore}; defaults in {@link SQLITE_WINDOW_STORE_DEFAULTS}. */
export interface SqliteWindowStoreOptions {
  /** The token whose plan is shared. Only a SHA-256 of it is kept, as the database's file name. */
  readonly token: string;
  /** Where the database lives. @defaultValue {@link quoteflowStateDir}() */
  readonly stateDir?: string;
  /**
   * How long after its start a request still in flight can arrive, in ms: a start whose process
   * died before it settled counts as arrived at this bound. Raise it with the client's timeouts.
   */
  readonly inFlightBoundMs?: number;
  /** How long a transaction waits for another process's, in ms, before the start is retried. */
  readonly busyTimeoutMs?: number;
  /** The clocks (tests inject their own). @defaultValue the system clock and `process.hrtime` */
  readonly time?: MachineTime;
}

/**
 * Defaults of {@link SqliteWindowStoreOptions}: `inFlightBoundMs` is {@link IN_FLIGHT_BOUND_MS}
 * (75 s, the default client's longest request); `busyTimeoutMs: 5_000`, far above a transaction
 * of this store (tens of microseconds) or a WAL checkpoint of its few pages.
 */
export const SQLITE_WINDOW_STORE_DEFAULTS = {
  inFlightBoundMs: IN_FLIGHT_BOUND_MS,
  busyTimeoutMs: 5_000,
} as const;

/** Old entries of a key are deleted at most this often, in ms (they block nothing meanwhile). */
const PRUNE_EVERY_MS = 1_000;

/** A busy database refuses the start for this long, in ms, then the scheduler asks again. */
const BUSY_RETRY_MS = 20;

interface SqliteTicket extends StartTicket {
  readonly rowIds: readonly number[];
}

/** One call's translation between the scheduler's clock (ms) and the stored monotonic instants. */
interface Frame {
  /** Clock ms minus monotonic ms, taken at this call. */
  readonly offsetMs: number;
  /** Monotonic ms now. */
  readonly monotonicNowMs: number;
}

/** The longest window of any plan: a calendar day (25 hours on a day that leaves daylight saving time). */
const LONGEST_WINDOW_MS = 25 * 3_600_000;

/**
 * The {@link WindowStore} every process of one token on this machine shares: a SQLite database
 * (`node:sqlite`) per token in the state directory, `quota-<sha256 of the token>.sqlite`.
 * `tryAcquire` checks and records in one `BEGIN IMMEDIATE` transaction, so two processes can never
 * both take the last start of a window; WAL lets `earliestStart` read while another process writes.
 *
 * - **Time.** Instants are stored on the machine-wide monotonic clock (`process.hrtime`:
 *   `CLOCK_MONOTONIC` on Linux, one value for every process of the host), translated from and to
 *   the scheduler's clock by an offset taken at each call, so a wall-clock step in one process
 *   moves nothing. The scheduler must therefore run on the **system clock** (`Date.now()`): a
 *   `ManualClock` or an accelerated clock would be translated wrongly (keep those on
 *   {@link MemoryWindowStore}; `sharedSchedulerFor` refuses the combination). After a reboot the
 *   stored instants are re-anchored through the wall clock.
 * - **Requests in flight.** A settle-anchored start is stored with its owner (this store) and its
 *   in-flight bound. This store waits for its own to settle (as {@link MemoryWindowStore} does);
 *   another process's counts as arriving now until it settles, so `earliestStart` answers early
 *   (a lower bound) and `tryAcquire`, which is exact, refuses until then. A start whose process
 *   was killed mid-request counts as arrived {@link DEAD_OWNER_GRACE_MS} after another process
 *   found it dead (the owner mark holds its pid), and at `start + inFlightBoundMs` at the latest.
 * - **Pruning.** Each start deletes its keys' entries that left their window and calendar buckets
 *   that ended, so the file stays a few pages (one row per start of the last minute, at most).
 *
 * The token never reaches the disk, a log or an error: only its SHA-256 names the file.
 *
 * @throws InvalidOptionError (`QF_INVALID_OPTION`, option `stateDir`) when the state directory or
 *   database cannot be created or opened.
 * @example
 * ```ts
 * const store = new SqliteWindowStore({ token: process.env.QUOTEFLOW_TOKEN! });
 * const scheduler = new PlanScheduler(planLimits('basic'), { store });
 * ```
 */
export class SqliteWindowStore implements WindowStore, Disposable {
  /** The database file. */
  readonly path: string;
  readonly inFlightBoundMs: number;
  private readonly db: DatabaseSync;
  private readonly sql: WindowStatements;
  private readonly time: MachineTime;
  /**
   * Marks this store's starts in flight: `<pid>~<random>` (nothing of the token), so another
   * process can tell that the owner died (see {@link DEAD_OWNER_GRACE_MS}).
   */
  private readonly owner = `${process.pid}~${randomUUID()}`;
  /** When each key's old entries were last deleted (monotonic ms). */
  private readonly prunedAtMs = new Map<string, number>();
  /** Settles that found the database busy, retried with the next start. */
  private readonly unsettled: { rowId: number; atMonotonicMs: number }[] = [];

  constructor(options: SqliteWindowStoreOptions) {
    if (typeof options.token !== 'string' || options.token === '')
      throw new InvalidOptionError('token', 'SqliteWindowStore: "token" must be a non-empty string');
    this.inFlightBoundMs = positive('inFlightBoundMs', options.inFlightBoundMs);
    const busyTimeoutMs = positive('busyTimeoutMs', options.busyTimeoutMs);
    this.time = options.time ?? systemMachineTime;
    const dir = options.stateDir ?? quoteflowStateDir();
    this.path = join(dir, `quota-${createHash('sha256').update(options.token).digest('hex')}.sqlite`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.db = openWindowDb(this.path, busyTimeoutMs);
    } catch (error) {
      throw new InvalidOptionError(
        'stateDir',
        `SqliteWindowStore: cannot open the quota database ${this.path} (${describe(error)}); ` +
          'set QUOTEFLOW_STATE_DIR to a writable directory',
      );
    }
    try {
      chmodSync(this.path, 0o600); // WAL and shared-memory files take the database's mode
    } catch {
      // Another user's file in a shared directory: using it is their choice, not an error.
    }
    reanchorAfterReboot(this.db, this.time);
    const dropped = dropImpossibleFuture(
      this.db,
      this.time.monotonicMs(),
      LONGEST_WINDOW_MS + this.inFlightBoundMs,
    );
    if (dropped > 0)
      globalThis.process?.emitWarning(
        `quoteflow quota: ${dropped} entries of ${this.path} lay further ahead than any window of a plan can ` +
          '(written under another clock: a copied or restored state directory, a clock that jumped); they were dropped',
        { code: 'QF_QUOTA_STATE_AHEAD' },
      );
    this.sql = prepareWindowStatements(this.db);
  }

  earliestStart(
    specs: readonly WindowSpec[],
    nowMs: number,
    extraStarts?: ReadonlyMap<string, number>,
  ): number {
    const frame = this.frame();
    try {
      return this.earliestIn(specs, nowMs, frame, extraStarts);
    } catch (error) {
      if (isBusy(error)) return nowMs; // a lower bound: tryAcquire decides
      throw error;
    }
  }

  tryAcquire(specs: readonly WindowSpec[], nowMs: number): AcquireResult {
    try {
      return immediate(this.db, () => {
        // The time is read again once the lock is held: waiting for it (another process's
        // transaction, a loaded machine) makes the caller's `nowMs` stale, and a start stored
        // earlier than the starts committed meanwhile would let a window take one too many.
        const frame = this.frame();
        const now = Math.max(nowMs, frame.monotonicNowMs + frame.offsetMs);
        this.flushUnsettled();
        const earliest = this.earliestIn(specs, now, frame);
        if (earliest > now) return { acquired: false, retryAtMs: earliest };
        return { acquired: true, ticket: this.record(specs, now, frame) };
      });
    } catch (error) {
      if (isBusy(error)) return { acquired: false, retryAtMs: nowMs + BUSY_RETRY_MS };
      throw error;
    }
  }

  settle(ticket: StartTicket, atMs: number): void {
    const rowIds = (ticket as Partial<SqliteTicket>).rowIds;
    if (rowIds === undefined || rowIds.length === 0 || !this.db.isOpen) return;
    const atMonotonicMs = atMs - this.frame().offsetMs;
    for (const rowId of rowIds) this.unsettled.push({ rowId, atMonotonicMs });
    try {
      immediate(this.db, () => this.flushUnsettled());
    } catch (error) {
      // Still in flight in the database, so still counted (conservative): flushed with the next start.
      if (!isBusy(error)) throw error;
    }
  }

  count(spec: WindowSpec, nowMs: number): number {
    const now = nowMs - this.frame().offsetMs;
    if (spec.kind === 'bucket') return this.bucketCount(spec.key, now);
    if (spec.kind === 'rolling')
      return (this.sql.slotTotalAfter.get(spec.key, now - spec.windowMs) as { n: number }).n;
    return (this.sql.countStartsAfter.get(spec.key, now - spec.windowMs) as { n: number }).n;
  }

  clear(): void {
    immediate(this.db, () => this.db.exec('DELETE FROM starts; DELETE FROM buckets; DELETE FROM slots;'));
  }

  /** Closes the database (starts still in flight expire by their bound). Idempotent. */
  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  private frame(): Frame {
    const monotonicNowMs = this.time.monotonicMs();
    return { offsetMs: this.time.clockMs() - monotonicNowMs, monotonicNowMs };
  }

  /** {@link earliestStart} in clock ms, reading the database as of now. */
  private earliestIn(
    specs: readonly WindowSpec[],
    nowMs: number,
    frame: Frame,
    extraStarts?: ReadonlyMap<string, number>,
  ): number {
    const now = nowMs - frame.offsetMs;
    let earliest = now;
    for (const spec of specs) {
      const extra = extraStarts?.get(spec.key) ?? 0;
      if (spec.kind === 'bucket') {
        if (this.bucketCount(spec.key, now) + extra >= spec.limit)
          earliest = Math.max(earliest, spec.endsAtMs - frame.offsetMs);
      } else if (spec.kind === 'rolling') {
        const after = now - spec.windowMs;
        const total = (this.sql.slotTotalAfter.get(spec.key, after) as { n: number }).n;
        if (total + extra < spec.limit) continue;
        const rows = this.sql.slotsAfter.all(spec.key, after) as { ends_at: number; count: number }[];
        const slots = rows.map((r) => [r.ends_at, r.count] as const);
        earliest = Math.max(earliest, rollingEarliest(slots, total, now, spec, extra));
      } else {
        const k = spec.limit - extra;
        const blocking = k <= 0 ? now : this.recent(spec, k, now, frame.monotonicNowMs);
        if (blocking !== undefined) earliest = Math.max(earliest, blocking + spec.windowMs);
      }
    }
    // (now + offset) is nowMs exactly when nothing blocks: the difference was exact.
    return earliest + frame.offsetMs;
  }

  /**
   * The instant the k-th most recent start of `spec` counts at (k = 1 the newest): `Infinity` for
   * this store's own start in flight, "now" for another process's (it cannot be earlier), its
   * in-flight bound once that passed, its settle or start time otherwise.
   */
  private recent(
    spec: SlidingWindowSpec,
    k: number,
    now: number,
    monotonicNowMs: number,
  ): number | undefined {
    const later = this.sql.startsAfter.all(spec.key, now) as {
      id: number;
      at: number;
      owner: string | null;
    }[];
    if (later.length >= k) {
      const times = later.map((r) => {
        if (r.owner === null) return r.at;
        if (r.owner === this.owner) return Number.POSITIVE_INFINITY;
        if (ownerIsDead(r.owner)) {
          // Killed mid-request: what it sent reaches the service within moments, not its full bound.
          const at = Math.min(r.at, monotonicNowMs + DEAD_OWNER_GRACE_MS);
          this.sql.settleStart.run(at, r.id, r.owner);
          return at;
        }
        return Math.min(r.at, monotonicNowMs);
      });
      times.sort((a, b) => b - a);
      return times[k - 1];
    }
    const row = this.sql.nthStartAtOrBefore.get(spec.key, now, k - later.length - 1) as
      { at: number } | undefined;
    return row?.at;
  }

  /** Records one start at `nowMs` under every spec; inside the transaction. */
  private record(specs: readonly WindowSpec[], nowMs: number, frame: Frame): SqliteTicket {
    const now = nowMs - frame.offsetMs;
    const settleKeys: string[] = [];
    const rowIds: number[] = [];
    for (const spec of specs) {
      if (spec.kind === 'bucket') {
        this.sql.addToBucket.run(spec.key, spec.endsAtMs - frame.offsetMs);
      } else if (spec.kind === 'rolling') {
        if (this.pruneDue(spec.key, now, spec.windowMs))
          this.sql.pruneSlots.run(spec.key, now - spec.windowMs);
        this.sql.addToSlot.run(spec.key, slotEndOf(now, spec.slotMs));
      } else {
        if (this.pruneDue(spec.key, now, spec.windowMs))
          this.sql.pruneStarts.run(spec.key, now - spec.windowMs);
        if (spec.anchor === 'settle') {
          const { lastInsertRowid } = this.sql.insertStart.run(
            spec.key,
            now + this.inFlightBoundMs,
            this.owner,
          );
          settleKeys.push(spec.key);
          rowIds.push(Number(lastInsertRowid));
        } else {
          this.sql.insertStart.run(spec.key, now, null);
        }
      }
    }
    if (this.pruneDue('', now, PRUNE_EVERY_MS)) this.sql.pruneBuckets.run(now);
    return { settleKeys, rowIds };
  }

  /**
   * Whether `key`'s old entries should be deleted now: at most once a second (or once a window),
   * so most starts write only their own rows (each page a transaction dirties costs a write).
   */
  private pruneDue(key: string, now: number, windowMs: number): boolean {
    const last = this.prunedAtMs.get(key);
    if (last !== undefined && now - last < Math.min(windowMs, PRUNE_EVERY_MS) && now >= last) return false;
    this.prunedAtMs.set(key, now);
    return true;
  }

  private bucketCount(key: string, now: number): number {
    const row = this.sql.bucket.get(key) as { count: number; ends_at: number } | undefined;
    return row === undefined || row.ends_at <= now ? 0 : row.count;
  }

  private flushUnsettled(): void {
    for (const { rowId, atMonotonicMs } of this.unsettled.splice(0))
      this.sql.settleStart.run(atMonotonicMs, rowId, this.owner);
  }
}

/**
 * How long after another process was found dead its requests in flight still count as arriving,
 * in ms: bytes it had written leave the host with its closed sockets within moments (instead of
 * waiting out the whole in-flight bound, 75 s, after a kill -9).
 */
export const DEAD_OWNER_GRACE_MS = 5_000;

/** Whether the process of an owner `<pid>~<random>` is gone (same host: the state directory is local). */
function ownerIsDead(owner: string): boolean {
  const pid = Number(owner.slice(0, owner.indexOf('~')));
  if (!Number.isInteger(pid) || pid <= 0) return false; // not ours to judge: wait for its bound
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function positive(name: keyof typeof SQLITE_WINDOW_STORE_DEFAULTS, value: number | undefined): number {
  const resolved = value ?? SQLITE_WINDOW_STORE_DEFAULTS[name];
  if (!(resolved > 0) || !Number.isFinite(resolved))
    throw new InvalidOptionError(
      name,
      `SqliteWindowStore: "${name}" must be a finite number > 0, got ${resolved}`,
    );
  return resolved;
}

function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const message = String(e.message ?? error);
  return typeof e.code === 'string' && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
}
