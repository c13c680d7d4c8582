import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { systemMachineTime, type MachineTime } from './internal/machine-time.js';
import { MemoryWindowStore } from './memory-window-store.js';
import { DEAD_OWNER_GRACE_MS, SqliteWindowStore } from './sqlite-window-store.js';
import type { StartTicket, WindowSpec } from './window-store.js';

const TOKEN = 'sqlite-store-test-token-5e1f';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qf-sqlite-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A machine whose monotonic clock tests move by hand; each process may see another wall clock. */
class TestMachine {
  monotonicMs = 0;
  bootId = 'boot-1';
  /** The time of one process: clock ms = monotonic ms + `clockAheadMs`. */
  process(clockAheadMs = 0): MachineTime {
    return {
      clockMs: () => this.monotonicMs + clockAheadMs,
      monotonicMs: () => this.monotonicMs,
      bootId: () => this.bootId,
    };
  }
}

const oneAtATime = (anchor: 'start' | 'settle' = 'settle'): WindowSpec => ({
  kind: 'sliding',
  key: 'rule:combined',
  windowMs: 1_000,
  limit: 1,
  anchor,
});

describe('SqliteWindowStore', () => {
  it('names its file by a hash of the token and never writes the token', () => {
    const store = new SqliteWindowStore({ token: TOKEN, stateDir: dir });
    expect(store.tryAcquire([oneAtATime()], Date.now()).acquired).toBe(true);
    store.close();
    const files = readdirSync(dir);
    expect(files.some((f) => /^quota-[0-9a-f]{64}\.sqlite$/.test(f))).toBe(true);
    for (const f of files) {
      expect(f).not.toContain(TOKEN);
      expect(readFileSync(join(dir, f)).includes(TOKEN)).toBe(false);
    }
  });

  it('refuses a state directory it cannot create, naming it and QUOTEFLOW_STATE_DIR, never the token', () => {
    const notADir = join(dir, 'file');
    writeFileSync(notADir, '');
    let error: unknown;
    try {
      new SqliteWindowStore({ token: TOKEN, stateDir: join(notADir, 'state') });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).message).toMatch(
      /ENOTDIR.*set QUOTEFLOW_STATE_DIR to a writable directory/,
    );
    expect((error as InvalidOptionError).message).not.toContain(TOKEN);
  });

  it('lets two connections to one file take a one-at-a-time window in turns, across wall clocks', () => {
    const machine = new TestMachine();
    machine.monotonicMs = 5_000;
    const a = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
    // B's wall clock runs 7 s ahead of A's: stored instants are monotonic, so they still agree.
    const b = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process(7_000) });
    const spec = oneAtATime();
    const taken = a.tryAcquire([spec], 5_000);
    expect(taken.acquired).toBe(true);
    // A's request is in flight: B is refused, and B cannot know when it settles: it looks again
    // one window from now at the earliest.
    expect(b.tryAcquire([spec], 12_000).acquired).toBe(false);
    expect(b.earliestStart([spec], 12_000)).toBe(13_000);
    machine.monotonicMs = 5_300;
    if (taken.acquired) a.settle(taken.ticket, 5_300);
    // Settled 300 ms after its start: the window runs from there, in either process's clock.
    expect(b.earliestStart([spec], 12_300)).toBe(13_300);
    expect(a.earliestStart([spec], 5_300)).toBe(6_300);
    machine.monotonicMs = 6_299;
    expect(b.tryAcquire([spec], 13_299)).toEqual({ acquired: false, retryAtMs: 13_300 });
    machine.monotonicMs = 6_300;
    expect(b.tryAcquire([spec], 13_300).acquired).toBe(true);
    expect(a.tryAcquire([spec], 6_300).acquired).toBe(false);
    a.close();
    b.close();
  });

  it("refuses a start whose caller read the time before another process took the window's starts", () => {
    const machine = new TestMachine();
    const a = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
    const b = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
    const twoPer20: WindowSpec = { kind: 'sliding', key: 'race', windowMs: 20, limit: 2, anchor: 'start' };
    // A read the time (95), then waited for the lock while B took the window's two starts.
    machine.monotonicMs = 100;
    expect(b.tryAcquire([twoPer20], 100).acquired).toBe(true);
    machine.monotonicMs = 110;
    expect(b.tryAcquire([twoPer20], 110).acquired).toBe(true);
    // A third start at 95 would put three in (95, 115]: refused until the first leaves the window.
    expect(a.tryAcquire([twoPer20], 95)).toEqual({ acquired: false, retryAtMs: 120 });
    a.close();
    b.close();
  });

  it("counts a dead holder's request in flight as arrived at its bound, then frees the window", () => {
    const machine = new TestMachine();
    const spec = oneAtATime();
    const dead = new SqliteWindowStore({
      token: TOKEN,
      stateDir: dir,
      time: machine.process(),
      inFlightBoundMs: 75_000,
    });
    expect(dead.tryAcquire([spec], 0).acquired).toBe(true);
    dead.close(); // killed mid-request: never settles
    const survivor = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
    machine.monotonicMs = 60_000;
    expect(survivor.tryAcquire([spec], 60_000).acquired).toBe(false);
    expect(survivor.earliestStart([spec], 60_000)).toBe(61_000); // asks again a window later
    machine.monotonicMs = 75_500;
    expect(survivor.earliestStart([spec], 75_500)).toBe(76_000); // bound + window
    machine.monotonicMs = 76_000;
    expect(survivor.tryAcquire([spec], 76_000).acquired).toBe(true);
    survivor.close();
  });

  it('keeps the day count of the wall clock across a reboot (monotonic time restarts)', () => {
    const machine = new TestMachine();
    machine.monotonicMs = 3_600_000;
    const day: WindowSpec = { kind: 'bucket', key: 'day:0', limit: 1, endsAtMs: 86_400_000 };
    const before = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
    expect(before.tryAcquire([day], 3_600_000).acquired).toBe(true);
    before.close();
    // Rebooted one hour later: monotonic time starts again near zero, the wall clock went on.
    machine.bootId = 'boot-2';
    machine.monotonicMs = 1_000;
    const after = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process(7_199_000) });
    expect(after.count(day, 7_200_000)).toBe(1);
    expect(after.tryAcquire([day], 7_200_000)).toEqual({ acquired: false, retryAtMs: 86_400_000 });
    after.close();
  });

  it('drops entries further ahead than any window (a state written under another clock), with one warning', async () => {
    const machine = new TestMachine();
    const warnings: string[] = [];
    const onWarning = (w: Error): void =>
      void warnings.push(`${(w as { code?: string }).code}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      // Written by a process whose monotonic clock ran three days ahead (copied, restored, jumped).
      machine.monotonicMs = 3 * 86_400_000;
      const ahead = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
      const day: WindowSpec = { kind: 'bucket', key: 'day:9', limit: 1, endsAtMs: 4 * 86_400_000 };
      expect(ahead.tryAcquire([oneAtATime(), day], machine.monotonicMs).acquired).toBe(true);
      ahead.close();
      machine.monotonicMs = 1_000;
      const now = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: machine.process() });
      // Without the cleanup the one-at-a-time window would hold until three days from now.
      expect(now.earliestStart([oneAtATime()], 1_000)).toBe(1_000);
      expect(now.tryAcquire([oneAtATime()], 1_000).acquired).toBe(true);
      now.close();
      await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
      expect(warnings).toEqual([
        expect.stringMatching(
          /^QF_QUOTA_STATE_AHEAD: quoteflow quota: 2 entries of .*quota-[0-9a-f]{64}\.sqlite/,
        ),
      ]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('prunes starts that left their window, so the file stays small', () => {
    const store = new SqliteWindowStore({ token: TOKEN, stateDir: dir, time: new TestMachine().process() });
    const spec: WindowSpec = { kind: 'sliding', key: 'k', windowMs: 10, limit: 1_000, anchor: 'start' };
    for (let t = 0; t < 1_000; t++) expect(store.tryAcquire([spec], t).acquired).toBe(true);
    // Deleted at most once a window (or a second): two windows' worth of rows at most.
    expect(store.count({ ...spec, windowMs: 1e9 }, 1_000)).toBeLessThanOrEqual(21);
    store.close();
  });

  it('behaves exactly as MemoryWindowStore within one process (property)', () => {
    const op = fc.oneof(
      fc.record({
        type: fc.constant('acquire' as const),
        specs: fc.subarray([0, 1, 2, 3, 4, 5], { minLength: 1 }),
      }),
      fc.record({ type: fc.constant('settle' as const), pick: fc.nat() }),
      fc.record({ type: fc.constant('earliest' as const), spec: fc.nat(5), extra: fc.nat(4) }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.record({ gapMs: fc.nat(400), op }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        (steps, limit) => {
          const specs: WindowSpec[] = [
            { kind: 'sliding', key: 'a', windowMs: 1_000, limit, anchor: 'settle' },
            { kind: 'sliding', key: 'b', windowMs: 300, limit: 1, anchor: 'start' },
            { kind: 'sliding', key: 'c', windowMs: 2_500, limit: limit + 2, anchor: 'settle' },
            { kind: 'bucket', key: 'day:0', limit: 3 * limit + 5, endsAtMs: 6_000 },
            { kind: 'bucket', key: 'day:1', limit: 2 * limit, endsAtMs: 12_000 },
            { kind: 'rolling', key: 'rolling', windowMs: 4_000, limit: 2 * limit + 3, slotMs: 500 },
          ];
          const machine = new TestMachine();
          const sqlite = new SqliteWindowStore({
            token: TOKEN,
            stateDir: dir,
            time: machine.process(),
            inFlightBoundMs: 1e9,
          });
          sqlite.clear();
          const memory = new MemoryWindowStore();
          const open: [StartTicket, StartTicket][] = [];
          const both = <T>(f: (s: MemoryWindowStore | SqliteWindowStore) => T): [T, T] => [
            f(memory),
            f(sqlite),
          ];
          try {
            for (const { gapMs, op } of steps) {
              machine.monotonicMs += gapMs;
              const now = machine.monotonicMs;
              if (op.type === 'acquire') {
                const chosen = op.specs.map((i) => specs[i]!);
                const [m, s] = both((store) => store.tryAcquire(chosen, now));
                expect(s.acquired).toBe(m.acquired);
                if (m.acquired && s.acquired) open.push([m.ticket, s.ticket]);
                if (!m.acquired && !s.acquired) expect(s.retryAtMs).toBe(m.retryAtMs);
              } else if (op.type === 'settle') {
                if (open.length === 0) continue;
                const [m, s] = open.splice(op.pick % open.length, 1)[0]!;
                memory.settle(m, now);
                sqlite.settle(s, now);
              } else {
                const extra = new Map([[specs[op.spec]!.key, op.extra]]);
                const [m, s] = both((store) => store.earliestStart(specs, now, extra));
                expect(s).toBe(m);
              }
              for (const spec of specs) expect(sqlite.count(spec, now)).toBe(memory.count(spec, now));
            }
          } finally {
            sqlite.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  /** A process that takes the one start of a settle-anchored window, then is SIGKILLed mid-request. */
  async function killedHolder(boundMs: number): Promise<number> {
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../../test-support/sqlite-holder-worker.ts'),
        dir,
        TOKEN,
        String(boundMs),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const heldAt = await new Promise<string>((resolve) =>
      holder.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())),
    );
    const killed = new Promise((resolve) => holder.on('close', resolve));
    holder.kill('SIGKILL');
    await killed;
    expect(heldAt).not.toBe('refused');
    return Number(heldAt);
  }

  /** Waits (real time) until this process gets the window's start; the monotonic instant it did. */
  async function acquireAfterHolder(): Promise<{ acquiredAt: number; refusals: number }> {
    const spec: WindowSpec = { kind: 'sliding', key: 'held', windowMs: 100, limit: 1, anchor: 'settle' };
    const store = new SqliteWindowStore({ token: TOKEN, stateDir: dir });
    let acquiredAt: number | undefined;
    let refusals = 0;
    while (acquiredAt === undefined) {
      const got = store.tryAcquire([spec], Date.now());
      if (got.acquired) acquiredAt = systemMachineTime.monotonicMs();
      else {
        refusals++;
        await new Promise((resolve) => setTimeout(resolve, Math.max(1, got.retryAtMs - Date.now())));
      }
    }
    store.close();
    return { acquiredAt, refusals };
  }

  it('frees the start of a process killed mid-request once its in-flight bound and the window passed (real processes)', async () => {
    const heldAt = await killedHolder(400);
    const { acquiredAt, refusals } = await acquireAfterHolder();
    // Never before the dead request's bound (400 ms) plus the window (100 ms), but then at once.
    expect(refusals).toBeGreaterThan(0);
    expect(acquiredAt - heldAt).toBeGreaterThanOrEqual(500 - 2); // Date.now() is whole ms
  });

  it('frees it a few seconds after the owner is found dead, not after a long in-flight bound (real processes)', async () => {
    const heldAt = await killedHolder(60_000);
    const { acquiredAt } = await acquireAfterHolder();
    // The dead owner's request counts as arriving up to DEAD_OWNER_GRACE_MS after it was found dead.
    expect(acquiredAt - heldAt).toBeGreaterThanOrEqual(DEAD_OWNER_GRACE_MS + 100 - 2);
    expect(acquiredAt - heldAt).toBeLessThan(30_000);
  }, 40_000);

  it('never lets processes racing on one file over a window limit (real processes, real time)', async () => {
    const workers = 4;
    const runs = await Promise.all(
      Array.from(
        { length: workers },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(
              process.execPath,
              [
                '--import',
                'tsx',
                join(import.meta.dirname, '../../test-support/sqlite-race-worker.ts'),
                dir,
                TOKEN,
              ],
              { stdio: ['ignore', 'pipe', 'inherit'] },
            );
            let out = '';
            child.stdout.on('data', (c: Buffer) => (out += c.toString()));
            child.on('error', reject);
            child.on('close', (code) =>
              code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}`)),
            );
          }),
      ),
    );
    const starts = runs
      .flatMap((out) => out.trim().split('\n').filter(Boolean).map(Number))
      .sort((x, y) => x - y);
    // Every worker got some (they compete), and no 3 starts ever fell within one 20 ms window.
    for (const out of runs) expect(out.trim().split('\n').length).toBeGreaterThan(0);
    expect(starts.length).toBeGreaterThan(workers);
    for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(20);
  });
});
