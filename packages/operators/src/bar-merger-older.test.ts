import { describe, expect, it } from 'vitest';
import type { BarUpdate } from '@quoteflow/core';
import { createBarMerger } from './bar-merger.js';
import type { BarMergerOptions, MergeBarsInput, MergeBarsOutput } from './bar-merger-types.js';
import { seriesKey } from './series-key.js';
import { MIN, T0, answer, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';
const KEY = seriesKey(C, 1);
const b = (k: number, close = 1) => bar(C, 1, T0 + k * MIN, close);
const at = (k: number, ms = 0) => T0 + k * MIN + ms;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => b(from + i));

function harness(options: BarMergerOptions) {
  const merger = createBarMerger({ graceMs: 5_000, ...options });
  const push = (input: MergeBarsInput): string[] => {
    const out: MergeBarsOutput[] = [];
    merger.push(input, (o) => out.push(o));
    return out.map((o) =>
      o.type === 'gap' ? `G:${o.reason}` : `${(o as BarUpdate).final ? 'F' : 'U'}@${(o.tsMs - T0) / MIN}`,
    );
  };
  return { merger, push };
}

describe('createBarMerger: older history below the oldest bar held (firstHeld)', () => {
  it('emits the bars older than the oldest held as final, once, oldest first', () => {
    const h = harness({ lastClosed: new Map([[KEY, at(20)]]), firstHeld: new Map([[KEY, at(10)]]) });
    // A page that reaches into what is held: only the part before minute 10 is new.
    expect(h.push(answer(at(30), ...range(5, 12)))).toEqual(['F@5', 'F@6', 'F@7', 'F@8', 'F@9']);
    // Read again (a restart of the growth, say): nothing twice, only what lies further back.
    expect(h.push(answer(at(31), ...range(2, 9)))).toEqual(['F@2', 'F@3', 'F@4']);
    expect(h.merger.lastClosed()).toEqual(new Map([[KEY, at(20)]]));
  });

  it('proves the newest of the older bars by the held one, without a newer bar in its answer', () => {
    const h = harness({ lastClosed: new Map([[KEY, at(20)]]), firstHeld: new Map([[KEY, at(10)]]) });
    // One bar, alone in its answer and read long before any calendar proof: the held bar at 10 proves it.
    expect(h.push(answer(at(9, 1_000), b(9)))).toEqual(['F@9']);
  });

  it('takes a latest page that holds older, held and newer bars in one push', () => {
    // A stock's one latest page: older bars first, then what is held, then bars newer than the
    // newest held (the last still forming).
    const h = harness({ lastClosed: new Map([[KEY, at(20)]]), firstHeld: new Map([[KEY, at(10)]]) });
    expect(h.push(answer(at(22, 500), ...range(7, 22)))).toEqual(['F@7', 'F@8', 'F@9', 'F@21', 'U@22']);
  });

  it('drops older bars when the oldest held is not known, as before', () => {
    const h = harness({ lastClosed: new Map([[KEY, at(20)]]) });
    expect(h.push(answer(at(30), ...range(5, 12)))).toEqual([]);
  });

  it('takes the oldest held from a series reset, and a later reset replaces it', () => {
    const h = harness({});
    h.push({ type: 'series-reset', code: C, klineType: 1, lastClosedMs: at(20), firstHeldMs: at(10) });
    expect(h.push(answer(at(30), ...range(8, 11)))).toEqual(['F@8', 'F@9']);
    h.push({ type: 'series-reset', code: C, klineType: 1, lastClosedMs: at(20) });
    expect(h.push(answer(at(31), ...range(3, 7)))).toEqual([]);
    expect(() => h.push({ type: 'series-reset', code: C, klineType: 1, firstHeldMs: Number.NaN })).toThrow(
      /firstHeldMs/,
    );
  });
});
