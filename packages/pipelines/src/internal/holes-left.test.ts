import type { Bar, GapMarker } from '@quoteflow/core';
import { describe, expect, it } from 'vitest';
import { holesLeft } from './holes-left.js';

const MIN = 60_000;
const T0 = Date.parse('2026-12-02T10:00:00Z'); // a Wednesday: crypto trades around the clock
const hole: GapMarker & { fromMs: number; toMs: number } = {
  type: 'gap',
  code: 'BTCUSDT',
  klineType: 1,
  fromMs: T0,
  toMs: T0 + 5 * MIN,
  reason: 'missing-bars',
};
const bar = (tsMs: number): Bar => ({ tsMs }) as Bar;

describe('holesLeft', () => {
  it('leaves nothing when the re-read holds every bar between the ends', () => {
    expect(
      holesLeft(
        hole,
        1,
        [1, 2, 3, 4].map((m) => bar(T0 + m * MIN)),
      ),
    ).toEqual([]);
  });

  it('keeps the whole hole when the re-read holds none of its bars', () => {
    expect(holesLeft(hole, 1, [bar(T0 - MIN), bar(T0 + 6 * MIN)])).toEqual([hole]);
  });

  it('narrows the hole to the stretch still missing', () => {
    expect(
      holesLeft(
        hole,
        1,
        [1, 2].map((m) => bar(T0 + m * MIN)),
      ),
    ).toEqual([{ ...hole, fromMs: T0 + 2 * MIN, toMs: T0 + 5 * MIN }]);
  });

  it('reports nothing a halt explains', () => {
    const halted = (code: string, _k: number, a: number, b: number) =>
      code === 'BTCUSDT' && a >= T0 && b <= hole.toMs;
    expect(holesLeft(hole, 1, [], halted)).toEqual([]);
  });
});
