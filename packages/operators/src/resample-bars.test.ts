import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import type { Bar, BarUpdate, KlineType } from '@quoteflow/core';
import { createBarResampler } from './bar-resampler.js';
import type { ResampleInput, ResampledBar } from './bar-resampler.js';
import { resampleBarList, resampleBars } from './resample-bars.js';
import type { BarReport } from './normalize-bars.js';
import { MIN, T0, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';
const m1 = (k: number, close: number, extra: Partial<Bar> = {}) => bar(C, 1, T0 + k * MIN, close, extra);
const asUpdate = (x: Bar, final: boolean): BarUpdate => {
  const { type: _t, ...rest } = x;
  return { ...rest, type: 'bar-update', final, revision: 0 };
};
const finals = (out: readonly ResampledBar[]) => out.filter((o) => o.final);

describe('resampleBarList', () => {
  it('aggregates 1-minute bars into 5 minutes: first open, last close, extremes, sums', () => {
    const bars = [
      m1(0, 10, { open: 9, high: 11, low: 8, volume: 1, turnover: 10 }),
      m1(1, 12, { open: 10, high: 13, low: 10, volume: 2, turnover: 24 }),
      m1(2, 11, { open: 12, high: 12, low: 7, volume: 3, turnover: 33 }),
      m1(3, 11, { volume: 4, turnover: 44 }),
      m1(4, 14, { open: 11, high: 15, low: 11, volume: 5, turnover: 70 }),
    ];
    const out = resampleBarList(bars, { to: 2 });
    expect(out.map((o) => o.final)).toEqual([false, false, false, false, true]);
    expect(out.at(-1)).toEqual({
      type: 'resampled-bar',
      code: C,
      sourceKlineType: 1,
      klineType: 2,
      periodMs: 5 * MIN,
      tsMs: T0,
      endMs: T0 + 5 * MIN,
      open: 9,
      high: 15,
      low: 7,
      close: 14,
      volume: 15,
      turnover: 181,
      sourceCount: 5,
      expectedCount: 5,
      partial: false,
      final: true,
      revision: 4,
    });
  });

  it('flags a period closed by a later bar with sources missing as partial', () => {
    const out = resampleBarList([m1(0, 1), m1(1, 2), m1(3, 3), m1(5, 4)], {
      to: { minutes: 5 },
      emit: 'final',
    });
    expect(out.map((o) => [(o.tsMs - T0) / MIN, o.final, o.partial, o.sourceCount])).toEqual([
      [0, true, true, 3],
      [5, false, true, 1], // still open: flushed as it stands
    ]);
  });

  it('counts a forming source bar but closes the period only when its last source is final', () => {
    const r = createBarResampler({ to: 2 });
    const out: ResampledBar[] = [];
    const emit = (o: ResampledBar) => out.push(o);
    for (let k = 0; k < 4; k++) r.push(m1(k, 1), emit);
    r.push(asUpdate(m1(4, 5, { high: 5 }), false), emit);
    r.push(asUpdate(m1(4, 6, { high: 6 }), false), emit);
    expect(out.at(-1)).toMatchObject({ close: 6, high: 6, final: false, partial: true, sourceCount: 5 });
    r.push(asUpdate(m1(4, 4, { high: 4 }), true), emit);
    expect(out.at(-1)).toMatchObject({ close: 4, high: 4, final: true, partial: false });
    r.push(m1(4, 9), emit); // a repeat of a closed source: late, dropped
    expect(finals(out)).toHaveLength(1);
  });

  it('aligns N-minute periods to UTC for 24-hour markets', () => {
    const base = Math.floor(T0 / (90 * MIN)) * 90 * MIN;
    const out = resampleBarList([bar(C, 1, base + 89 * MIN, 1), bar(C, 1, base + 90 * MIN, 2)], {
      to: { minutes: 90 },
      emit: 'final',
    });
    expect(out.map((o) => o.tsMs)).toEqual([base, base + 90 * MIN]);
    expect(out[0]).toMatchObject({
      klineType: undefined,
      periodMs: 90 * MIN,
      expectedCount: 90,
      partial: true,
    });
  });

  describe('stock sessions', () => {
    const sh = (d: number, hh: number, mm: number) => Date.UTC(2024, 2, d, hh - 8, mm); // Asia/Shanghai, March 2024
    const ny = (d: number, hh: number, mm: number) => Date.UTC(2024, 2, d, hh + 4, mm); // New York, EDT

    it('builds 2-hour bars around the lunch break (not offered by the service for stocks)', () => {
      const out = resampleBarList(
        [bar('600416.SH', 1, sh(15, 11, 29), 1), bar('600416.SH', 1, sh(15, 13, 0), 2)],
        { to: 6, emit: 'final' },
      );
      expect(out.map((o) => [o.tsMs, o.endMs, o.expectedCount])).toEqual([
        [sh(15, 9, 30), sh(15, 11, 30), 120],
        [sh(15, 13, 0), sh(15, 15, 0), 120],
      ]);
    });

    it('builds 4-hour bars whose last one ends with the session', () => {
      const out = resampleBarList(
        [bar('AAPL.US', 1, ny(15, 13, 29), 1), bar('AAPL.US', 1, ny(15, 15, 59), 2)],
        { to: 7, emit: 'final' },
      );
      expect(out.map((o) => [o.tsMs, o.endMs, o.expectedCount])).toEqual([
        [ny(15, 9, 30), ny(15, 13, 30), 240],
        [ny(15, 13, 30), ny(15, 16, 0), 150],
      ]);
    });

    it('closes a daily bar from hourly bars once every session hour is in', () => {
      const hours = [sh(15, 9, 30), sh(15, 10, 30), sh(15, 13, 0), sh(15, 14, 0)].map((t, i) =>
        bar('600416.SH', 5, t, i + 1),
      );
      const out = resampleBarList(hours, { to: 8, emit: 'final' });
      expect(out).toEqual([
        expect.objectContaining({
          tsMs: sh(15, 0, 0) - 0,
          endMs: sh(15, 15, 0),
          open: 1,
          close: 4,
          expectedCount: 4,
          partial: false,
          final: true,
        }),
      ]);
    });

    it('builds a weekly bar from daily bars of the trading days', () => {
      const days = [11, 12, 13, 14, 15].map((d) => bar('600416.SH', 8, sh(d, 0, 0), d));
      const out = resampleBarList(days, { to: 9, emit: 'final' });
      expect(out).toEqual([
        expect.objectContaining({
          tsMs: sh(11, 0, 0),
          open: 11,
          close: 15,
          expectedCount: 5,
          partial: false,
          final: true,
        }),
      ]);
    });

    it('drops and reports a bar outside the session', () => {
      const reports: BarReport[] = [];
      expect(
        resampleBarList([bar('600416.SH', 1, sh(15, 12, 0), 1)], { to: 6, onReport: (r) => reports.push(r) }),
      ).toEqual([]);
      expect(reports.map((r) => r.problem)).toEqual(['outside-session']);
    });
  });

  it('sums known volumes, treats a null one as 0 and gives null only when all are null', () => {
    const some = resampleBarList([m1(0, 1, { volume: null }), m1(1, 1, { volume: 4 })], { to: 2 }).at(-1);
    expect(some?.volume).toBe(4);
    const none = resampleBarList([m1(0, 1, { volume: null }), m1(1, 1, { volume: null })], { to: 2 }).at(-1);
    expect(none?.volume).toBeNull();
  });

  it('drops and reports a source older than the open period', () => {
    const reports: BarReport[] = [];
    const out = resampleBarList([m1(5, 1), m1(0, 2)], { to: 2, onReport: (r) => reports.push(r) });
    expect(out.every((o) => o.tsMs === T0 + 5 * MIN)).toBe(true);
    expect(reports.map((r) => r.problem)).toEqual(['late']);
  });

  it('rejects a target that the source cannot nest in', () => {
    expect(() => resampleBarList([bar(C, 3, T0, 1)], { to: { minutes: 20 } })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'to' }),
    );
    expect(() => resampleBarList([bar(C, 8, T0, 1)], { to: 5 })).toThrow(/longer/);
    expect(() => resampleBarList([bar(C, 9, T0, 1)], { to: 10 })).toThrow(/weeks/);
    expect(() => resampleBars({ to: 11 as KlineType })).toThrow(expect.objectContaining({ option: 'to' }));
    expect(() => resampleBars({ to: { minutes: 2.5 } })).toThrow(/whole number of minutes/);
  });
});

// ---- property tests against a naive reference ------------------------------------------------

const P = 5 * MIN;

interface Src {
  slot: number;
  close: number;
  volume: number;
  final: boolean;
}
const toInput = (s: Src): ResampleInput => {
  const x = m1(s.slot, s.close, { high: s.close + 1, low: s.close - 1, open: s.close, volume: s.volume });
  return s.final ? x : asUpdate(x, false);
};

/** Naive reference: a Map of sources per open period, aggregated from scratch on every emission. */
function referenceResample(inputs: readonly ResampleInput[]): ResampledBar[] {
  const out: ResampledBar[] = [];
  let open:
    { start: number; entries: Map<number, { x: ResampleInput; final: boolean }>; rev: number } | undefined;
  let closedUpTo = -Infinity;
  const build = (final: boolean): ResampledBar => {
    const o = open as NonNullable<typeof open>;
    const xs = [...o.entries.values()].sort((a, b) => a.x.tsMs - b.x.tsMs).map((e) => e.x);
    const finalsIn = [...o.entries.values()].filter((e) => e.final).length;
    return {
      type: 'resampled-bar',
      code: C,
      sourceKlineType: 1,
      klineType: 2,
      periodMs: P,
      tsMs: o.start,
      endMs: o.start + P,
      open: (xs[0] as ResampleInput).open,
      high: Math.max(...xs.map((x) => x.high)),
      low: Math.min(...xs.map((x) => x.low)),
      close: (xs.at(-1) as ResampleInput).close,
      volume: xs.reduce((s, x) => s + (x.volume ?? 0), 0),
      turnover: xs.reduce((s, x) => s + (x.turnover ?? 0), 0),
      sourceCount: xs.length,
      expectedCount: 5,
      partial: !final || finalsIn < 5,
      final,
      revision: o.rev++,
    };
  };
  for (const x of inputs) {
    const final = x.type === 'bar' || x.final;
    if (open !== undefined && x.tsMs >= open.start + P) {
      out.push(build(true));
      closedUpTo = open.start + P;
      open = undefined;
    }
    if (open === undefined) {
      if (x.tsMs < closedUpTo) continue;
      open = { start: Math.floor(x.tsMs / P) * P, entries: new Map(), rev: 0 };
    } else if (x.tsMs < open.start) continue;
    const e = open.entries.get(x.tsMs);
    if (e?.final === true) continue;
    open.entries.set(x.tsMs, { x, final });
    const newest = [...open.entries.entries()].sort((a, b) => b[0] - a[0])[0]?.[1];
    if ([...open.entries.values()].filter((v) => v.final).length >= 5 && newest?.final === true) {
      out.push(build(true));
      closedUpTo = open.start + P;
      open = undefined;
    } else out.push(build(false));
  }
  return out;
}

const arbSrc = fc.record({
  slot: fc.integer({ min: 0, max: 16 }),
  close: fc.integer({ min: 2, max: 9 }),
  volume: fc.integer({ min: 0, max: 5 }),
  final: fc.boolean(),
});

describe('resample properties', () => {
  it('matches the naive reference on random orders, duplicates and forming updates', () => {
    fc.assert(
      fc.property(fc.array(arbSrc, { maxLength: 40 }), (srcs) => {
        const inputs = srcs.map(toInput);
        expect(resampleBarList(inputs, { to: 2 })).toEqual([
          ...referenceResample(inputs),
          ...openTail(inputs),
        ]);
      }),
      { numRuns: 400 },
    );
  });

  it('equals a group-by of closed bars in order, however they repeat', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 29 }), { maxLength: 30 }),
        fc.array(fc.nat(29)),
        (slots, repeats) => {
          const bars = [...slots]
            .sort((a, b) => a - b)
            .map((k) => m1(k, k + 2, { high: k + 5, low: 1, volume: k }));
          // Repeat some bars right after themselves (the provider's repeated rows).
          const inputs = bars.flatMap((x, i) => (repeats.includes(i) ? [x, x] : [x]));
          const got = resampleBarList(inputs, { to: 2, emit: 'final' });
          const groups = new Map<number, Bar[]>();
          for (const x of bars)
            groups.set(Math.floor(x.tsMs / P) * P, [...(groups.get(Math.floor(x.tsMs / P) * P) ?? []), x]);
          const want = [...groups.entries()].map(([start, xs]) => ({
            tsMs: start,
            open: (xs[0] as Bar).open,
            close: (xs.at(-1) as Bar).close,
            high: Math.max(...xs.map((x) => x.high)),
            low: Math.min(...xs.map((x) => x.low)),
            volume: xs.reduce((s, x) => s + (x.volume as number), 0),
            sourceCount: xs.length,
            partial: xs.length < 5,
          }));
          expect(
            got.map(({ tsMs, open, close, high, low, volume, sourceCount, partial }) => ({
              tsMs,
              open,
              close,
              high,
              low,
              volume,
              sourceCount,
              partial,
            })),
          ).toEqual(want);
          // Every period but the last is final; the last is final only when complete.
          expect(got.slice(0, -1).every((o) => o.final)).toBe(true);
          if (got.length > 0) expect(got.at(-1)?.final).toBe(!(got.at(-1) as ResampledBar).partial);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** What `flush` adds after the reference's outputs: the open period as it stands. */
function openTail(inputs: readonly ResampleInput[]): ResampledBar[] {
  const all = referenceResample(inputs);
  const last = all.at(-1);
  return last !== undefined && !last.final ? [{ ...last, revision: last.revision + 1 }] : [];
}

describe('resampleBars', () => {
  const run = (fn: Parameters<TestScheduler['run']>[0]) =>
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(fn);
  const five = [0, 1, 2, 3, 4].map((k) => m1(k, k + 1)) as [Bar, Bar, Bar, Bar, Bar];
  const want = resampleBarList(five, { to: 2, emit: 'final' })[0] as ResampledBar;

  it('completes on empty and stays silent on never', () => {
    run(({ cold, expectObservable }) => {
      expectObservable(cold<Bar>('|').pipe(resampleBars({ to: 2 }))).toBe('|');
      expectObservable(cold<Bar>('-').pipe(resampleBars({ to: 2 }))).toBe('-');
    });
  });

  it('emits one value for one source bar', () => {
    run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: five[0] as Bar }).pipe(resampleBars({ to: 2, emit: 'all' }))).toBe(
        'a|',
        {
          a: expect.objectContaining({ final: false, partial: true, sourceCount: 1 }),
        },
      );
    });
  });

  it('emits the closed period once among many values', () => {
    run(({ cold, expectObservable }) => {
      expectObservable(
        cold('abcde|', { a: five[0], b: five[1], c: five[2], d: five[3], e: five[4] }).pipe(
          resampleBars({ to: 2, emit: 'final' }),
        ),
      ).toBe('----e|', { e: want });
    });
  });

  it('forwards a source error and unsubscribes on early unsubscribe', () => {
    run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold('a#', { a: five[0] }).pipe(resampleBars({ to: 2, emit: 'final' }))).toBe('-#');
      const src = cold('abcde|', { a: five[0], b: five[1], c: five[2], d: five[3], e: five[4] });
      expectObservable(src.pipe(resampleBars({ to: 2, emit: 'final' })), '^--!').toBe('---');
      expectSubscriptions(src.subscriptions).toBe('^--!');
    });
  });

  it('errors the output when a user callback throws or the source cannot nest', () => {
    const boom = new Error('calendar failed');
    run(({ cold, expectObservable }) => {
      const calendarOf = () => {
        throw boom;
      };
      expectObservable(cold('a', { a: five[0] }).pipe(resampleBars({ to: 2, calendarOf }))).toBe(
        '#',
        {},
        boom,
      );
      expectObservable(cold('a', { a: bar(C, 3, T0, 1) }).pipe(resampleBars({ to: { minutes: 20 } }))).toBe(
        '#',
        {},
        expect.objectContaining({ code: 'QF_INVALID_OPTION' }),
      );
    });
  });
});
