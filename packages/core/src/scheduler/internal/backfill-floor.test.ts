import { describe, expect, it } from 'vitest';
import { BackfillFloor } from './backfill-floor.js';

const WAITING = { any: true, onEndpoint: true } as const;

/** Which of the next `n` starts go to backfill when live always wants the slot and backfill waits. */
function pattern(floor: BackfillFloor, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) {
    if (floor.dueFor('kline')) {
      floor.owedStarted('kline', true);
      out += 'B';
    } else {
      floor.liveStarted('kline', WAITING);
      out += 'L';
    }
  }
  return out;
}

describe('BackfillFloor', () => {
  it('owes backfill one start in five at a share of 0.2', () => {
    expect(pattern(new BackfillFloor(0.2), 15)).toBe('LLLLBLLLLBLLLLB');
  });

  it('owes backfill one start in ten at 0.1, whatever the float sums', () => {
    expect(pattern(new BackfillFloor(0.1), 20)).toBe('LLLLLLLLLBLLLLLLLLLB');
  });

  it('keeps a share that is no unit fraction on average (0.3: three in ten)', () => {
    expect([...pattern(new BackfillFloor(0.3), 100)].filter((c) => c === 'B').length).toBe(30);
  });

  it('drops the credit while no backfill waits, so nothing is banked', () => {
    const floor = new BackfillFloor(0.2);
    for (let i = 0; i < 4; i++) floor.liveStarted('kline', WAITING);
    expect(floor.dueFor('kline')).toBe(true);
    floor.liveStarted('kline', { any: false, onEndpoint: false });
    expect(floor.dueFor('kline')).toBe(false);
  });

  it("owes an endpoint's share on that endpoint only, without touching the combined share", () => {
    const floor = new BackfillFloor(0.2);
    // Four live /batch-kline starts while backfill waits there, and four others elsewhere after it.
    for (let i = 0; i < 4; i++) floor.liveStarted('batch-kline', WAITING);
    expect(floor.dueFor('batch-kline')).toBe(true);
    expect(floor.dueOnAll()).toBe(true);
    floor.owedStarted('batch-kline', true);
    for (let i = 0; i < 4; i++) floor.liveStarted('depth-tick', { any: true, onEndpoint: false });
    expect(floor.dueOnAll()).toBe(true);
    expect(floor.dueFor('batch-kline')).toBe(true); // via the combined share
    // Paying the combined share on /kline leaves /batch-kline's own credit (zero) as it was.
    floor.owedStarted('kline', false);
    expect(floor.dueFor('batch-kline')).toBe(false);
  });

  it('takes the combined share elsewhere than where backfill is ahead while live work waits there', () => {
    const floor = new BackfillFloor(0.2);
    for (let i = 0; i < 4; i++) floor.liveStarted('kline', { any: true, onEndpoint: false });
    expect(floor.dueFor('batch-kline', true)).toBe(true);
    floor.owedStarted('batch-kline', true); // the combined share, taken where live waits: ahead there now
    for (let i = 0; i < 4; i++) floor.liveStarted('kline', { any: true, onEndpoint: false });
    expect(floor.dueOnAll()).toBe(true);
    expect(floor.dueFor('batch-kline', true)).toBe(false); // live waits for /batch-kline
    expect(floor.dueFor('batch-kline', false)).toBe(true); // nobody else wants it
    // Four live /batch-kline starts later backfill is even there again.
    for (let i = 0; i < 4; i++) floor.liveStarted('batch-kline', WAITING);
    expect(floor.dueFor('batch-kline', true)).toBe(true);
  });

  it('counts live starts already decided as made', () => {
    const floor = new BackfillFloor(0.2);
    for (let i = 0; i < 3; i++) floor.liveStarted('kline', WAITING);
    expect(floor.dueFor('kline')).toBe(false);
    expect(floor.dueFor('kline', true, { all: 1, onEndpoint: 1 })).toBe(true);
  });
});
