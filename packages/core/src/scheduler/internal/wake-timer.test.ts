import { describe, expect, it } from 'vitest';
import type { Clock } from '../../clock.js';
import { WakeTimer } from './wake-timer.js';

describe('WakeTimer', () => {
  it('never hands its clock a delay a Node timer cannot hold (it would fire at once)', () => {
    const delays: number[] = [];
    const clock: Clock = {
      now: () => 0,
      setTimeout: (_cb, ms) => delays.push(ms),
      clearTimeout: () => undefined,
    };
    const timer = new WakeTimer(clock, () => undefined);
    timer.arm(5 * 86_400_000 * 10, 0); // fifty days ahead
    timer.arm(1_000, 0);
    expect(delays).toEqual([2_147_483_647, 1_000]);
  });
});
