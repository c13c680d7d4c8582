import { describe, expect, it } from 'vitest';
import type { BarUpdate } from '@quoteflow/core';
import { createBarMerger } from './bar-merger.js';
import type { MergeBarsInput, MergeBarsOutput, SeriesReset } from './bar-merger-types.js';
import { seriesKey } from './series-key.js';
import { MIN, T0, answer, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';
const b = (k: number, close = 1, klineType: 1 | 2 = 1) => bar(C, klineType, T0 + k * MIN, close);
const at = (k: number, ms = 0) => T0 + k * MIN + ms;
const reset = (lastClosedMs?: number, klineType: 1 | 2 = 1): SeriesReset => ({
  type: 'series-reset',
  code: C,
  klineType,
  ...(lastClosedMs === undefined ? {} : { lastClosedMs }),
});

function harness(lastClosed?: ReadonlyMap<string, number>) {
  const merger = createBarMerger({ graceMs: 5_000, ...(lastClosed === undefined ? {} : { lastClosed }) });
  const push = (input: MergeBarsInput): MergeBarsOutput[] => {
    const out: MergeBarsOutput[] = [];
    merger.push(input, (o) => out.push(o));
    return out;
  };
  return { merger, push };
}

/** `F@k` final, `U@k` forming, `G:reason@a-b` gap (k = minutes after T0). */
const view = (outs: readonly MergeBarsOutput[]) =>
  outs.map((o) =>
    o.type === 'gap'
      ? `G:${o.reason}@${((o.fromMs ?? 0) - T0) / MIN}-${((o.toMs ?? 0) - T0) / MIN}`
      : `${o.final ? 'F' : 'U'}@${(o.tsMs - T0) / MIN}/${(o as BarUpdate).klineType}`,
  );

describe('createBarMerger: a series reset (handed to another worker and back)', () => {
  it('drops the pending bars unemitted and starts again after the reset watermark', () => {
    const h = harness();
    expect(view(h.push(answer(at(2, 500), b(0), b(1), b(2))))).toEqual(['F@0/1', 'F@1/1', 'U@2/1']);
    // Another worker wrote up to minute 5 meanwhile.
    expect(h.push(reset(at(5)))).toEqual([]);
    expect(h.merger.pending()).toEqual([]);
    expect(h.merger.lastClosed()).toEqual(new Map([[seriesKey(C, 1), at(5)]]));
    expect(view(h.push(answer(at(7, 500), b(4), b(5), b(6), b(7))))).toEqual(['F@6/1', 'U@7/1']);
    expect(h.merger.lastClosed()).toEqual(new Map([[seriesKey(C, 1), at(6)]]));
  });

  it('reports the bars missing between the reset watermark and the first bar seen, as a seed would', () => {
    const h = harness();
    h.push(answer(at(1, 500), b(0), b(1)));
    h.push(reset(at(2)));
    // Bars 8 and 9 wait behind the hole, forming values too.
    expect(view(h.push(answer(at(9, 500), b(8), b(9))))).toEqual(['G:missing-bars@2-8']);
  });

  it('forgets a hole: bars held behind it are no longer waited for', () => {
    const h = harness();
    h.push(answer(at(1, 500), b(0), b(1)));
    // Minutes 2-4 missing, minute 1 unproven: newer bars wait for both.
    expect(view(h.push(answer(at(6, 500), b(5), b(6))))).toEqual(['G:missing-bars@1-5', 'G:unconfirmed@1-5']);
    h.push(reset(at(5)));
    expect(view(h.push(answer(at(7, 500), b(6), b(7))))).toEqual(['F@6/1', 'U@7/1']);
  });

  it('without a watermark starts the series afresh: bars closed before may be emitted again', () => {
    const h = harness(new Map([[seriesKey(C, 1), at(3)]]));
    expect(view(h.push(answer(at(5, 500), b(3), b(4), b(5))))).toEqual(['F@4/1', 'U@5/1']);
    h.push(reset());
    expect(h.merger.lastClosed()).toEqual(new Map());
    expect(view(h.push(answer(at(5, 900), b(3), b(4), b(5))))).toEqual(['F@3/1', 'F@4/1', 'U@5/1']);
  });

  it('replaces a seeded watermark for a series not yet seen, and leaves other series alone', () => {
    const h = harness(new Map([[seriesKey(C, 1), at(3)]]));
    expect(view(h.push(answer(at(1, 500), b(0, 1, 2), b(1, 1, 2))))).toEqual(['F@0/2', 'U@1/2']);
    h.push(reset(at(6)));
    expect(h.merger.lastClosed()).toEqual(
      new Map([
        [seriesKey(C, 2), at(0)],
        [seriesKey(C, 1), at(6)],
      ]),
    );
    expect(view(h.push(answer(at(8, 500), b(6), b(7), b(8))))).toEqual(['F@7/1', 'U@8/1']);
    expect(view(h.push(answer(at(2, 500), b(1, 1, 2), b(2, 1, 2))))).toEqual(['F@1/2', 'U@2/2']);
  });

  it('rejects a watermark that is not a finite number, naming it', () => {
    const h = harness();
    expect(() => h.push(reset(Number.NaN))).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'lastClosedMs' }),
    );
  });
});
