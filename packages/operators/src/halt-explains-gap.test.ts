import { describe, expect, it } from 'vitest';
import type { GapMarker } from '@quoteflow/core';
import { haltExplainsGap, type Halt } from './halt-explains-gap.js';
import { createBarMerger } from './bar-merger.js';
import type { MergeBarsOutput } from './bar-merger-types.js';
import { bar } from '../test-support/bars.js';

// Tuesday 2026-11-24 in Shanghai: the morning session is 01:30-03:30 UTC.
const at = (hhmm: string) => Date.parse(`2026-11-24T${hhmm}:00Z`);
const CODE = '600000.SH';

describe('haltExplainsGap', () => {
  const halts: Halt[] = [{ code: CODE, fromMs: at('01:40'), toMs: at('02:10') }];
  it('explains a hole that a halt of the code spans from its first missing bar to the next bar seen', () => {
    expect(haltExplainsGap(halts, CODE, 1, at('01:39'), at('02:10'))).toBe(true);
  });
  it('does not explain a hole that starts before the halt, one of another code, or one past the resumption', () => {
    expect(haltExplainsGap(halts, CODE, 1, at('01:35'), at('02:10'))).toBe(false);
    expect(haltExplainsGap(halts, '600001.SH', 1, at('01:39'), at('02:10'))).toBe(false);
    expect(haltExplainsGap(halts, CODE, 1, at('01:39'), at('02:20'))).toBe(false);
  });
  it('explains any hole after a halt that has not resumed', () => {
    expect(
      haltExplainsGap(
        [{ code: CODE, fromMs: at('01:40'), toMs: undefined }],
        CODE,
        1,
        at('01:39'),
        at('03:00'),
      ),
    ).toBe(true);
  });
});

describe('the merger with isHalted', () => {
  const gaps = (halts: readonly Halt[]): GapMarker[] => {
    const merger = createBarMerger({ isHalted: (c, k, a, b) => haltExplainsGap(halts, c, k, a, b) });
    const out: MergeBarsOutput[] = [];
    const read = at('03:40'); // after the morning session: both bars proven final
    merger.push(
      [
        bar(CODE, 1, at('01:39'), 10, { readAtMs: read, receivedAtMs: read + 1 }),
        bar(CODE, 1, at('02:10'), 11, { readAtMs: read, receivedAtMs: read + 1 }),
      ],
      (o) => out.push(o),
    );
    return out.filter((o): o is GapMarker => o.type === 'gap');
  };
  it('reports no gap for bars missing while the product was halted, and a gap without the halt', () => {
    expect(gaps([{ code: CODE, fromMs: at('01:40'), toMs: at('02:10') }])).toEqual([]);
    expect(gaps([])).toEqual([
      expect.objectContaining({ code: CODE, reason: 'missing-bars', fromMs: at('01:39'), toMs: at('02:10') }),
    ]);
  });
});
