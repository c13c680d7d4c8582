import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { TableWriter } from '../table-writer.js';
import { CLOCK_TOLERANCE_MS, processState, thisProcess, writerVerdict } from './writer-liveness.js';

/** A writer record of another machine, renewed `renewedAgoMs` ago by its own clock. */
function remote(leaseMs: number, renewal = 1, renewedMs = Date.now()): TableWriter {
  return {
    id: `elsewhere~7~${randomBytes(4).toString('hex')}~1`,
    host: 'a-host-that-is-not-this-one',
    pid: 7,
    sinceMs: renewedMs,
    leaseMs,
    renewal,
    renewedMs,
  };
}

describe('processState', () => {
  it('knows this process alive, and a pid that runs nothing on this machine dead', () => {
    expect(processState(thisProcess())).toBe('alive');
    expect(processState({ host: hostname(), pid: 2 ** 30 })).toBe('dead');
  });

  it.runIf(thisProcess().started !== undefined)(
    'takes a pid reused by a later process for a dead writer: the start recorded is not the process now',
    () => {
      const self = thisProcess();
      const started = self.started!;
      const tick = Number(started.slice(started.lastIndexOf('/') + 1));
      const earlier = `${started.slice(0, started.lastIndexOf('/'))}/${tick - 1}`;
      expect(processState({ ...self, started: earlier })).toBe('dead');
    },
  );

  it('cannot tell a process of another machine, nor of another pid namespace or boot of this one', () => {
    expect(processState({ host: 'a-host-that-is-not-this-one', pid: process.pid })).toBe('unknown');
    if (thisProcess().started !== undefined)
      expect(processState({ host: hostname(), pid: process.pid, started: 'other-boot/pid:[1]/1' })).toBe(
        'unknown',
      );
  });
});

describe('writerVerdict', () => {
  it('keeps a writer of another machine alive until its renewal has not advanced for its lease, on this monotonic clock', () => {
    const w = remote(10_000);
    expect(writerVerdict(w, 1_000)).toEqual({ live: true });
    expect(writerVerdict(w, 10_999)).toEqual({ live: true });
    // Renewed at 10,999 (as this process sees it): another whole lease from there.
    const renewed = { ...w, renewal: 2 };
    expect(writerVerdict(renewed, 10_999)).toEqual({ live: true });
    expect(writerVerdict(renewed, 20_998)).toEqual({ live: true });
    expect(writerVerdict(renewed, 20_999)).toEqual({ live: false, why: 'its lease ran out' });
  });

  it("ignores a wall clock ahead or behind within the tolerance, and counts a claim abandoned long ago by the writer's own time", () => {
    const wall = Date.now();
    const skewed = remote(10_000, 1, wall + CLOCK_TOLERANCE_MS / 2);
    expect(writerVerdict(skewed, 0, wall)).toEqual({ live: true });
    expect(writerVerdict(skewed, 9_999, wall)).toEqual({ live: true });
    const recent = remote(10_000, 1, wall - CLOCK_TOLERANCE_MS);
    expect(writerVerdict(recent, 0, wall)).toEqual({ live: true });
    // Renewed tolerance + 4 s ago: 4 s of its lease are gone at first sight.
    const older = remote(10_000, 1, wall - CLOCK_TOLERANCE_MS - 4_000);
    expect(writerVerdict(older, 0, wall)).toEqual({ live: true });
    expect(writerVerdict(older, 6_000, wall)).toEqual({ live: false, why: 'its lease ran out' });
    const abandoned = remote(10_000, 1, wall - 3_600_000);
    expect(writerVerdict(abandoned, 0, wall)).toEqual({ live: false, why: 'its lease ran out' });
  });

  it('judges a writer of this machine by its process at once, whatever its lease', () => {
    const self = thisProcess();
    const alive: TableWriter = { ...remote(1), ...self, renewedMs: 0 };
    expect(writerVerdict(alive, 1e12)).toEqual({ live: true });
    const gone: TableWriter = { ...remote(3_600_000), host: hostname(), pid: 2 ** 30 };
    expect(writerVerdict(gone, 0)).toEqual({ live: false, why: 'its process is gone' });
  });
});
