import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock, QuoteflowError } from '@quoteflow/core';
import type { ClusterMembership, MembershipView } from './cluster-membership.js';
import {
  clusterSync,
  type ClusterSyncEvent,
  type ClusterSyncHandle,
  type ClusterSyncOptions,
  type ShareableRun,
  type WorkLease,
} from './cluster-sync.js';
import { FENCED_REMINDER_MS } from './internal/fenced-reminder.js';
import { balancedShares } from './rendezvous.js';

const ME = 'me';
const HEARTBEAT_MS = 1_000;
const ITEMS = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
/** The monotonic clock starts far from wall time, so an `atMs` taken from it would show. */
const CLOCK_START_MS = 1_000;

/** This worker's share of {@link ITEMS} among `members`, sorted. */
function shareOf(members: readonly string[]): string[] {
  return [...(balancedShares(ITEMS, members).get(ME) ?? [])].sort();
}

/** A membership the test drives: it emits the views, and `log` records what clusterSync asked of it. */
class FakeMembership {
  readonly workerId = ME;
  readonly heartbeatMs = HEARTBEAT_MS;
  readonly clock = new ManualClock(CLOCK_START_MS);
  /** Items another worker still holds: a claim does not get them. */
  readonly heldElsewhere = new Set<string>();
  claimError: Error | undefined;
  started = false;
  closed = false;
  readonly #views = new Subject<MembershipView>();
  readonly views$ = this.#views.asObservable();

  constructor(private readonly log: string[]) {}

  view(members: readonly string[], fenced = false): void {
    this.#views.next({ members: fenced ? [] : [...members].sort(), fenced });
  }
  leaseValid(): boolean {
    return true;
  }
  renewLease(): void {
    this.log.push('renew');
  }
  start(): void {
    this.started = true;
  }
  async claim(items: readonly string[]): Promise<string[]> {
    this.log.push(`claim ${items.join(',')}`);
    if (this.claimError !== undefined) throw this.claimError;
    return items.filter((item) => !this.heldElsewhere.has(item));
  }
  async release(items: readonly string[]): Promise<number> {
    this.log.push(`release ${[...items].sort().join(',')}`);
    return items.length;
  }
  async close(): Promise<void> {
    this.closed = true;
    this.#views.complete();
  }
}

/** Resolves or rejects from outside: a step of the work the test lets finish when it wants. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void; fail: (error: unknown) => void } {
  let open!: (value: T) => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/** One run of the work: records its steps in the shared log; `add`/`remove` only when in place. */
class FakeWork implements ShareableRun<string> {
  readonly done: Promise<string>;
  add?: (items: readonly string[]) => Promise<void>;
  remove?: (items: readonly string[]) => Promise<void>;
  readonly #end = gate<string>();
  /** What the next `add` / `remove` / `stop` waits for (at once by default). */
  addStep: () => Promise<void> = async () => undefined;
  removeStep: () => Promise<void> = async () => undefined;
  stopStep: () => Promise<void> = async () => undefined;

  constructor(
    readonly n: number,
    readonly items: readonly string[],
    readonly lease: WorkLease,
    private readonly log: string[],
    inPlace: boolean,
  ) {
    this.done = this.#end.promise;
    this.done.catch(() => undefined);
    log.push(`start#${n} ${items.join(',')}`);
    if (!inPlace) return;
    this.add = async (more) => {
      this.log.push(`add#${n} ${more.join(',')}`);
      await this.addStep();
      this.log.push(`added#${n}`);
    };
    this.remove = async (less) => {
      this.log.push(`remove#${n} ${less.join(',')}`);
      await this.removeStep();
      this.log.push(`removed#${n}`);
    };
  }

  async stop(): Promise<string> {
    this.log.push(`stop#${this.n}`);
    await this.stopStep();
    this.#end.open(`run#${this.n}`);
    return this.done;
  }

  /** Ends the run on its own, with an error. */
  fail(error: unknown): void {
    this.#end.fail(error);
  }
}

interface Setup {
  readonly membership: FakeMembership;
  readonly log: string[];
  readonly events: ClusterSyncEvent[];
  readonly works: FakeWork[];
  readonly handle: ClusterSyncHandle<string>;
  /** Lets pending promises run and moves the membership's clock `ms` on. */
  readonly advance: (ms?: number) => Promise<void>;
}

function setup(
  options: Partial<Omit<ClusterSyncOptions<string>, 'membership' | 'items' | 'run'>> & {
    inPlace?: boolean;
    /** `run` throws this instead of starting the work. */
    startError?: unknown;
  } = {},
): Setup {
  const log: string[] = [];
  const events: ClusterSyncEvent[] = [];
  const works: FakeWork[] = [];
  const membership = new FakeMembership(log);
  const { inPlace = true, startError, ...rest } = options;
  const handle = clusterSync<string>({
    onEvent: (event) => events.push(event),
    ...rest,
    membership: membership as unknown as ClusterMembership,
    items: ITEMS,
    run: (items, lease) => {
      if (startError !== undefined) throw startError;
      const work = new FakeWork(works.length + 1, items, lease, log, inPlace);
      works.push(work);
      return work;
    },
  });
  return { membership, log, events, works, handle, advance: (ms = 0) => membership.clock.advance(ms) };
}

const assignments = (events: readonly ClusterSyncEvent[]) =>
  events.filter((e): e is Extract<ClusterSyncEvent, { type: 'assignment' }> => e.type === 'assignment');
const warnings = (events: readonly ClusterSyncEvent[]) =>
  events.filter((e): e is Extract<ClusterSyncEvent, { type: 'warning' }> => e.type === 'warning');
const sorted = (items: readonly string[]) => [...items].sort();

/** How `promise` has settled so far, read without awaiting it. */
function outcomeOf<T>(promise: Promise<T>): { state: 'pending' | 'resolved' | 'rejected'; value?: unknown } {
  const outcome: { state: 'pending' | 'resolved' | 'rejected'; value?: unknown } = { state: 'pending' };
  promise.then(
    (value) => Object.assign(outcome, { state: 'resolved', value }),
    (error: unknown) => Object.assign(outcome, { state: 'rejected', value: error }),
  );
  return outcome;
}

/** Two members whose shares split {@link ITEMS}, `me` first. */
const PAIR = [ME, 'other'];
const mine = shareOf(PAIR);
const theirs = sorted(ITEMS.filter((item) => !mine.includes(item)));

describe('clusterSync', () => {
  it('claims nothing until the member set has been still for startSettleMs, at most 3× it in all', async () => {
    const { membership, log, works, handle, advance } = setup({ startSettleMs: 1_500 });
    expect(membership.started).toBe(true);
    membership.view([ME]);
    await advance(1_400);
    membership.view([ME, 'a']);
    await advance(1_400);
    membership.view([ME, 'a', 'b']);
    await advance(1_400);
    membership.view([ME, 'a', 'b', 'c']);
    await advance(299); // 4,499 ms since the first view: the cap (4,500) not reached yet
    expect(log).toEqual([]);
    await advance(1);
    const share = shareOf([ME, 'a', 'b', 'c']);
    expect(log).toEqual([`claim ${share.join(',')}`, `start#1 ${share.join(',')}`]);
    expect(works[0]!.items).toEqual(share);
    await handle.stop();
  });

  it('settles for 1.5 heartbeats by default', async () => {
    const { membership, log, handle, advance } = setup();
    membership.view([ME]);
    await advance(HEARTBEAT_MS * 1.5 - 1);
    expect(log).toEqual([]);
    await advance(1);
    expect(log).toEqual([`claim ${ITEMS.join(',')}`, `start#1 ${ITEMS.join(',')}`]);
    await handle.stop();
  });

  it('reports members and assignments with wall-clock atMs', async () => {
    const before = Date.now();
    const { membership, events, handle, advance } = setup({ startSettleMs: 0 });
    membership.view(PAIR);
    await advance();
    expect(events).toEqual([
      { type: 'members', atMs: expect.any(Number), members: PAIR, fenced: false },
      { type: 'assignment', atMs: expect.any(Number), held: mine, gained: mine, lost: [], pending: [] },
    ]);
    for (const e of events) expect(e.atMs).toBeGreaterThanOrEqual(before);
    await handle.stop();
  });

  it('adds gained items to the running work in place, reported held before the add finishes', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view(PAIR);
    await advance();
    const adding = gate();
    works[0]!.addStep = () => adding.promise;
    log.length = 0;
    membership.view([ME]);
    await advance();
    expect(log).toEqual([`claim ${theirs.join(',')}`, `add#1 ${theirs.join(',')}`]);
    expect(assignments(events).at(-1)).toMatchObject({ held: ITEMS, gained: theirs, lost: [], pending: [] });
    adding.open();
    await advance();
    expect(log.at(-1)).toBe('added#1');
    expect(works).toHaveLength(1);
    await handle.stop();
  });

  it('removes lost items in place and releases them only once the work has given them up', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME]);
    await advance();
    const removing = gate();
    works[0]!.removeStep = () => removing.promise;
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(log).toEqual([`remove#1 ${theirs.join(',')}`]);
    removing.open();
    await advance();
    expect(log).toEqual([`remove#1 ${theirs.join(',')}`, 'removed#1', `release ${theirs.join(',')}`]);
    expect(assignments(events).at(-1)).toMatchObject({ held: mine, gained: [], lost: theirs, pending: [] });
    expect(works).toHaveLength(1);
    await handle.stop();
  });

  it('removes before it adds when a change both loses and gains items', async () => {
    const { membership, log, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME, 'x']);
    await advance();
    log.length = 0;
    membership.view([ME, 'y']);
    await advance();
    const gained = shareOf([ME, 'y']).filter((i) => !shareOf([ME, 'x']).includes(i));
    const lost = shareOf([ME, 'x']).filter((i) => !shareOf([ME, 'y']).includes(i));
    expect(gained.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    expect(log).toEqual([
      `claim ${gained.join(',')}`,
      `remove#1 ${lost.join(',')}`,
      'removed#1',
      `release ${sorted(lost).join(',')}`,
      `add#1 ${gained.join(',')}`,
      'added#1',
    ]);
    await handle.stop();
  });

  it('restarts a run that cannot change in place: stops it, releases the lost items, starts over the rest', async () => {
    const { membership, log, events, handle, advance } = setup({ startSettleMs: 0, inPlace: false });
    membership.view([ME]);
    await advance();
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(log).toEqual(['stop#1', `release ${theirs.join(',')}`, `start#2 ${mine.join(',')}`]);
    expect(assignments(events).at(-1)).toMatchObject({ held: mine, gained: [], lost: theirs, pending: [] });
    await expect(handle.stop()).resolves.toEqual(['run#1', 'run#2']);
  });

  it('divides units, not items: a worker holds whole units, and one unit goes to one worker while the others stand by', async () => {
    const units = [
      ['A', 'B', 'C'],
      ['D', 'E', 'F'],
      ['G', 'H'],
    ];
    const three = [ME, 'x', 'y'];
    const { membership, works, handle, advance } = setup({ startSettleMs: 0, units });
    membership.view(three);
    await advance();
    // The units' owners by the same division every worker computes (a unit is named by its first item).
    const ids = balancedShares(
      units.map((u) => u[0]!),
      three,
    );
    const mineOfThree = (ids.get(ME) ?? []).flatMap((id) => units.find((u) => u[0] === id)!);
    expect(ids.get(ME)).toHaveLength(1); // three units, three workers: one each
    expect(sorted(works[0]!.items)).toEqual(sorted(mineOfThree));
    await handle.stop();

    const alone = setup({ startSettleMs: 0, units: [ITEMS] });
    // Of three workers, `holder` holds the one unit and this one comes next, before `third`.
    const wins = (a: string, b: string) => balancedShares([ITEMS[0]!], [a, b]).get(a)!.length === 1;
    const names = Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i));
    const holder = names.find((m) => wins(m, ME))!;
    const third = names.find((m) => wins(ME, m) && wins(holder, m))!;
    alone.membership.view([ME, holder]);
    await alone.advance();
    alone.membership.view([ME, holder, third]);
    await alone.advance();
    // It stands by, and says so once.
    expect(alone.works).toEqual([]);
    expect(assignments(alone.events)).toEqual([
      { type: 'assignment', atMs: expect.any(Number), held: [], gained: [], lost: [], pending: [] },
    ]);
    // The holder gone, the one unit moves whole, to this one.
    alone.membership.view([ME, third]);
    await alone.advance();
    expect(alone.works.flatMap((w) => w.items)).toEqual(ITEMS);
    await alone.handle.stop();
  });

  it('refuses units that share an item, when it is built', () => {
    expect(() =>
      setup({
        units: [
          ['A', 'B'],
          ['B', 'C'],
        ],
      }),
    ).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', message: expect.stringContaining('item B') }),
    );
  });

  it('claims an item still held elsewhere again every heartbeat, reporting it pending meanwhile', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    const [late, ...rest] = ITEMS as [string, ...string[]];
    membership.heldElsewhere.add(late);
    membership.view([ME]);
    await advance();
    expect(works[0]!.items).toEqual(rest);
    expect(assignments(events).at(-1)).toMatchObject({ held: rest, pending: [late] });
    log.length = 0;
    await advance(HEARTBEAT_MS - 1);
    expect(log).toEqual([]);
    await advance(1);
    expect(log).toEqual([`claim ${late}`]);
    membership.heldElsewhere.clear();
    await advance(HEARTBEAT_MS);
    expect(log).toEqual([`claim ${late}`, `claim ${late}`, `add#1 ${late}`, 'added#1']);
    expect(assignments(events).at(-1)).toMatchObject({ held: ITEMS, gained: [late], pending: [] });
    await handle.stop();
  });

  it('warns and retries at the next heartbeat when a claim fails', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.claimError = new Error('Redis away');
    membership.view([ME]);
    await advance();
    expect(works).toHaveLength(0);
    expect(warnings(events)).toMatchObject([
      { message: 'claiming items failed (Redis away?); retrying', error: membership.claimError },
    ]);
    membership.claimError = undefined;
    await advance(HEARTBEAT_MS);
    expect(log.filter((l) => l.startsWith('claim'))).toHaveLength(2);
    expect(works[0]!.items).toEqual(ITEMS);
    await handle.stop();
  });

  it('stops everything when fenced, renews the lease once it holds nothing, and says so every 5 s', async () => {
    const { membership, log, events, handle, advance } = setup({ startSettleMs: 10_000 });
    membership.view([ME]);
    await advance(10_000);
    log.length = 0;
    membership.view([], true);
    await advance();
    expect(log).toEqual(['stop#1', `release ${ITEMS.join(',')}`, 'renew']);
    expect(assignments(events).at(-1)).toMatchObject({ held: [], lost: ITEMS, pending: [] });
    await advance(FENCED_REMINDER_MS * 2);
    expect(warnings(events).map((w) => w.message)).toEqual([
      'fenced for 5 s (Redis unreachable, or this worker was paused past its lease): it holds no series until a heartbeat gets through',
      'fenced for 10 s (Redis unreachable, or this worker was paused past its lease): it holds no series until a heartbeat gets through',
    ]);
    expect(warnings(events)[0]).not.toHaveProperty('error');
    // Back: the claim does not wait for another settle, and the reminders end.
    membership.view([ME]);
    await advance();
    expect(log.at(-1)).toBe(`start#2 ${ITEMS.join(',')}`);
    await advance(FENCED_REMINDER_MS * 2);
    expect(warnings(events)).toHaveLength(2);
    await handle.stop();
  });

  it('stops at once on a fence that comes before the set settled', async () => {
    const { membership, log, handle, advance } = setup({ startSettleMs: 10_000 });
    membership.view([], true);
    await advance();
    expect(log).toEqual(['renew']);
    await handle.stop();
  });

  it('restarts the work over everything held when an add fails', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view(PAIR);
    await advance();
    works[0]!.addStep = () => Promise.reject(new Error('add broke'));
    log.length = 0;
    membership.view([ME]);
    await advance();
    expect(log).toEqual([
      `claim ${theirs.join(',')}`,
      `add#1 ${theirs.join(',')}`,
      'stop#1',
      `start#2 ${ITEMS.join(',')}`,
    ]);
    expect(warnings(events).map((w) => w.message)).toEqual([
      'adding items to the running work failed; restarting it',
    ]);
    await expect(handle.stop()).resolves.toEqual(['run#1', 'run#2']);
  });

  it('restarts the work when a remove fails, releasing the lost items after the stop', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME]);
    await advance();
    works[0]!.removeStep = () => Promise.reject(new Error('remove broke'));
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(log).toEqual([
      `remove#1 ${theirs.join(',')}`,
      'stop#1',
      `release ${theirs.join(',')}`,
      `start#2 ${mine.join(',')}`,
    ]);
    expect(warnings(events).map((w) => w.message)).toEqual([
      'changing the running work failed; restarting it',
    ]);
    await handle.stop();
  });

  it('drops the work and claims afresh when the run ends fenced (its lease lapsed)', async () => {
    const { membership, log, events, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME]);
    await advance();
    log.length = 0;
    works[0]!.fail(new Error('commit refused', { cause: new QuoteflowError('QF_FENCED', 'fenced') }));
    await advance();
    expect(log).toEqual([
      `release ${ITEMS.join(',')}`,
      `claim ${ITEMS.join(',')}`,
      `start#2 ${ITEMS.join(',')}`,
    ]);
    expect(warnings(events).map((w) => w.message)).toEqual([
      'the lease lapsed; uncommitted work dropped, rejoining',
    ]);
    await expect(handle.stop()).resolves.toEqual(['run#2']);
  });

  it('goes on changing the next run when a run ended with an add it never finished', async () => {
    // Seen with a worker paused past its lease while it read a takeover's history: its run ended
    // fenced with the add pending for good, and every later change waited behind that add.
    const { membership, log, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view(PAIR);
    await advance();
    works[0]!.addStep = () => new Promise<void>(() => undefined);
    membership.view([ME]);
    await advance();
    expect(log.at(-1)).toBe(`add#1 ${theirs.join(',')}`);
    works[0]!.fail(new Error('commit refused', { cause: new QuoteflowError('QF_FENCED', 'fenced') }));
    await advance();
    expect(log.at(-1)).toBe(`start#2 ${ITEMS.join(',')}`);
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(log).toEqual([`remove#2 ${theirs.join(',')}`, 'removed#2', `release ${theirs.join(',')}`]);
    await expect(handle.stop()).resolves.toEqual(['run#2']);
  });

  it('ends with the run’s failure, after releasing its items and leaving, with no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { membership, log, works, handle, advance } = setup({ startSettleMs: 0 });
      membership.view([ME]);
      await advance();
      log.length = 0;
      const boom = new Error('disk full');
      works[0]!.fail(boom);
      await expect(handle.done).rejects.toBe(boom);
      expect(log).toEqual([`release ${ITEMS.join(',')}`]);
      expect(membership.closed).toBe(true);
      // Node reports a rejection nobody handled once the microtasks have run.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      await expect(handle.stop()).rejects.toBe(boom);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('ends with the error of a run that throws as it starts, releasing what it claimed for it', async () => {
    const boom = new Error('bad option');
    const { membership, log, handle, advance } = setup({ startSettleMs: 0, startError: boom });
    const outcome = outcomeOf(handle.done);
    membership.view([ME]);
    await advance();
    expect(outcome).toEqual({ state: 'rejected', value: boom });
    expect(log).toEqual([`claim ${ITEMS.join(',')}`, `release ${ITEMS.join(',')}`]);
    expect(membership.closed).toBe(true);
  });

  it('ends with the error of a run whose stop fails when it must restart, releasing what it holds', async () => {
    const { membership, log, works, handle, advance } = setup({ startSettleMs: 0, inPlace: false });
    membership.view([ME]);
    await advance();
    const broke = new Error('flush failed');
    works[0]!.stopStep = () => Promise.reject(broke);
    const outcome = outcomeOf(handle.done);
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(outcome).toEqual({ state: 'rejected', value: broke });
    expect(log).toEqual(['stop#1', `release ${theirs.join(',')}`, `release ${mine.join(',')}`]);
    expect(membership.closed).toBe(true);
  });

  it('goes on when the stop of a run it restarts is fenced: its rows were dropped, not lost', async () => {
    const { membership, log, works, handle, advance } = setup({ startSettleMs: 0, inPlace: false });
    membership.view([ME]);
    await advance();
    works[0]!.stopStep = () => Promise.reject(new QuoteflowError('QF_FENCED', 'fenced'));
    log.length = 0;
    membership.view(PAIR);
    await advance();
    expect(log).toEqual(['stop#1', `release ${theirs.join(',')}`, `start#2 ${mine.join(',')}`]);
    await expect(handle.stop()).resolves.toEqual(['run#2']);
  });

  it('keeps a run that ended on its own in its results', async () => {
    const { membership, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME]);
    await advance();
    await works[0]!.stop(); // as if it had finished its work
    await advance();
    await expect(handle.stop()).resolves.toEqual(['run#1']);
  });

  it('on stop flushes the run, waits for an add in flight, releases what it holds and leaves, once', async () => {
    const { membership, log, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view(PAIR);
    await advance();
    const adding = gate();
    works[0]!.addStep = () => adding.promise;
    // The run flushes the add before it ends (a run's pending changes settle by its end).
    works[0]!.stopStep = () => adding.promise;
    membership.view([ME]);
    await advance();
    log.length = 0;
    const stopping = handle.stop();
    expect(handle.stop()).toBe(stopping);
    await advance();
    expect(log).toEqual(['stop#1']);
    expect(membership.closed).toBe(false);
    adding.open();
    await expect(stopping).resolves.toEqual(['run#1']);
    expect(log).toEqual(['stop#1', 'added#1', `release ${ITEMS.join(',')}`]);
    expect(membership.closed).toBe(true);
    await expect(handle.done).resolves.toEqual(['run#1']);
    expect(membership.clock.pendingTimers).toBe(0);
  });

  it('stops when its signal aborts, and never joins when it was aborted already', async () => {
    const controller = new AbortController();
    const { membership, works, handle, advance } = setup({ startSettleMs: 0, signal: controller.signal });
    membership.view([ME]);
    await advance();
    controller.abort();
    await expect(handle.done).resolves.toEqual(['run#1']);
    expect(works[0]!.items).toEqual(ITEMS);

    const aborted = setup({ signal: AbortSignal.abort() });
    await expect(aborted.handle.done).resolves.toEqual([]);
    expect(aborted.membership.started).toBe(false);
    expect(aborted.membership.closed).toBe(true);
  });

  it('tells the work which workers departed, oldest first, learning nothing from a fenced view', async () => {
    const { membership, works, handle, advance } = setup({ startSettleMs: 0 });
    membership.view([ME, 'a', 'b', 'c']);
    await advance();
    const lease = works[0]!.lease;
    expect(lease.workerId).toBe(ME);
    expect(lease.valid()).toBe(true);
    expect(lease.departed()).toEqual([]);
    membership.view([ME, 'a', 'c']);
    membership.view([], true);
    membership.view([ME, 'c']);
    expect(lease.departed()).toEqual(['b', 'a']);
    await handle.stop();
  });

  it('goes on when an event listener throws', async () => {
    const { membership, works, handle, advance } = setup({
      startSettleMs: 0,
      onEvent: () => {
        throw new Error('listener broke');
      },
    });
    membership.view([ME]);
    await advance();
    expect(works[0]!.items).toEqual(ITEMS);
    await expect(handle.stop()).resolves.toEqual(['run#1']);
  });
});
