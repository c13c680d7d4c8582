import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import type { Bar } from '@quoteflow/core';
import { normalizeBar, normalizeBarList, normalizeBars } from './normalize-bars.js';
import type { BarInput, BarReport } from './normalize-bars.js';
import { MIN, T0, bar } from '../test-support/bars.js';

const wire = (tsS: number, close: string, volume: string | null = '10'): BarInput => ({
  code: 'AAPL.US',
  klineType: 1,
  tsMs: String(tsS),
  open: close,
  high: close,
  low: close,
  close,
  volume,
  turnover: volume,
});

describe('normalizeBarList', () => {
  it('sorts newest-first bars and collapses the repeats, reporting each dropped repeat', () => {
    const a = bar('X', 1, T0, 1);
    const b = bar('X', 1, T0 + MIN, 2);
    const { bars, reports } = normalizeBarList([b, a, b, a]);
    expect(bars).toEqual([a, b]);
    expect(reports.map((r) => r.problem)).toEqual(['duplicate', 'duplicate']);
  });

  it('lets the later of two differing rows with the same start win', () => {
    const { bars } = normalizeBarList([bar('X', 1, T0, 1), bar('X', 1, T0, 2)]);
    expect(bars.map((b) => b.close)).toEqual([2]);
  });

  it('reads a timestamp in seconds as seconds and reports the repair', () => {
    const { bars, reports } = normalizeBarList([wire(1677829200, '136.421')]);
    expect(bars[0]?.tsMs).toBe(1677829200_000);
    expect(bars[0]?.close).toBe(136.421);
    expect(reports).toEqual([
      expect.objectContaining({ problem: 'timestamp-in-seconds', action: 'repaired', tsMs: 1677829200_000 }),
    ]);
  });

  it('keeps an empty volume as null (never NaN) and reports it', () => {
    const { bars, reports } = normalizeBarList([wire(1677829200, '1', '')]);
    expect(bars[0]?.volume).toBeNull();
    expect(bars[0]?.turnover).toBeNull();
    expect(reports.map((r) => r.problem)).toContain('missing-volume');
  });

  it.each([
    ['a non-numeric price', { ...wire(1677829200, 'abc') }, 'bad-price'],
    ['an empty price', { ...wire(1677829200, '') }, 'bad-price'],
    ['high below low', { ...wire(1677829200, '5'), high: '4', low: '6' }, 'inconsistent-ohlc'],
    ['close above high', { ...wire(1677829200, '5'), close: '7' }, 'inconsistent-ohlc'],
    ['a negative volume', { ...wire(1677829200, '5', '-1') }, 'bad-volume'],
    ['a non-numeric volume', { ...wire(1677829200, '5', 'x') }, 'bad-volume'],
    ['a NaN timestamp', { ...wire(1677829200, '5'), tsMs: Number.NaN }, 'bad-timestamp'],
    ['a bad kline type', { ...wire(1677829200, '5'), klineType: 11 }, 'bad-kline-type'],
    ['an empty code', { ...wire(1677829200, '5'), code: '' }, 'bad-code'],
  ] as const)('drops a row with %s and reports it', (_name, row, problem) => {
    const { bars, reports } = normalizeBarList([row as BarInput]);
    expect(bars).toEqual([]);
    expect(reports.at(-1)).toEqual(expect.objectContaining({ problem, action: 'dropped', row }));
  });

  it('returns a valid decoded bar as the same object', () => {
    const b = bar('X', 1, T0, 1);
    expect(normalizeBar(b)).toBe(b);
  });

  it('keeps the read stamps of a row and counts a row without them as read at 0', () => {
    const stamped = { ...wire(1677829200, '1'), readAtMs: 5, receivedAtMs: 7 };
    const { bars } = normalizeBarList([stamped, wire(1677829260, '1')]);
    expect(bars.map((b) => [b.readAtMs, b.receivedAtMs])).toEqual([
      [5, 7],
      [0, 0],
    ]);
  });

  it('agrees with a naive reference and never yields NaN', () => {
    const num = fc.oneof(fc.integer({ min: 1, max: 9 }), fc.constantFrom(Number.NaN, 0));
    const row = fc.record(
      {
        code: fc.constantFrom('A', 'B'),
        klineType: fc.constantFrom(1, 2),
        tsMs: fc.oneof(
          fc.integer({ min: 0, max: 5 }).map((k) => T0 + k * MIN),
          fc.integer({ min: 0, max: 5 }).map((k) => (T0 + k * MIN) / 1000),
        ),
        open: num,
        high: num,
        low: num,
        close: num,
        volume: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 9 }), fc.constant('')),
        turnover: fc.constant(1),
        readAtMs: fc.integer({ min: 0, max: 9 }).map((k) => T0 + k * 1000),
        receivedAtMs: fc.integer({ min: 0, max: 9 }).map((k) => T0 + k * 1000 + 1),
      },
      { requiredKeys: ['code', 'klineType', 'tsMs', 'open', 'high', 'low', 'close', 'volume', 'turnover'] },
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), (rows) => {
        const { bars } = normalizeBarList(rows);
        expect(bars).toEqual(referenceNormalize(rows));
        for (const b of bars)
          for (const v of [b.open, b.high, b.low, b.close, b.volume ?? 0])
            expect(Number.isNaN(v)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

function referenceNormalize(rows: readonly BarInput[]): Bar[] {
  const byKey = new Map<string, Bar>();
  for (const r of rows) {
    const [o, h, l, c] = [r.open, r.high, r.low, r.close].map(Number) as [number, number, number, number];
    if (![o, h, l, c].every(Number.isFinite)) continue;
    if (!(l <= Math.min(o, c) && h >= Math.max(o, c))) continue;
    let ts = Number(r.tsMs);
    if (ts < 1e11) ts *= 1000;
    const volume = r.volume === null || r.volume === '' || r.volume === undefined ? null : Number(r.volume);
    const b: Bar = {
      type: 'bar',
      code: r.code,
      klineType: r.klineType as 1,
      tsMs: ts,
      open: o,
      high: h,
      low: l,
      close: c,
      volume,
      turnover: Number(r.turnover),
      readAtMs: r.readAtMs ?? 0,
      receivedAtMs: r.receivedAtMs ?? 0,
    };
    const key = `${b.code}|${b.klineType}|${ts}`;
    byKey.delete(key); // last wins
    byKey.set(key, b);
  }
  return [...byKey.values()].sort((a, b) =>
    a.code < b.code ? -1 : a.code > b.code ? 1 : a.klineType - b.klineType || a.tsMs - b.tsMs,
  );
}

describe('normalizeBars', () => {
  const run = (fn: Parameters<TestScheduler['run']>[0]) =>
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(fn);
  const a = bar('X', 1, T0, 1);
  const b = bar('X', 1, T0 + MIN, 2);

  it('emits one sorted batch per input batch and completes', () => {
    run(({ cold, expectObservable }) => {
      expectObservable(cold('x-y|', { x: [b, a], y: [] as Bar[] }).pipe(normalizeBars())).toBe('x-y|', {
        x: [a, b],
        y: [],
      });
    });
  });

  it('completes on empty, stays silent on never, forwards an error', () => {
    run(({ cold, expectObservable }) => {
      expectObservable(cold<Bar[]>('|').pipe(normalizeBars())).toBe('|');
      expectObservable(cold<Bar[]>('-').pipe(normalizeBars())).toBe('-');
      expectObservable(cold('x#', { x: [a] }).pipe(normalizeBars())).toBe('x#', { x: [a] });
    });
  });

  it('unsubscribes from the source on early unsubscribe', () => {
    run(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold('x-x-x|', { x: [a] });
      expectObservable(src.pipe(normalizeBars()), '^-!').toBe('x-', { x: [a] });
      expectSubscriptions(src.subscriptions).toBe('^-!');
    });
  });

  it('sends reports to onReport and errors the output when onReport throws', () => {
    const reports: BarReport[] = [];
    run(({ cold, expectObservable }) => {
      const bad = { ...a, high: 0 };
      expectObservable(
        cold('x|', { x: [bad] }).pipe(normalizeBars({ onReport: (r) => reports.push(r) })),
      ).toBe('x|', { x: [] });
      const boom = new Error('callback failed');
      const throwing = normalizeBars({
        onReport: () => {
          throw boom;
        },
      });
      expectObservable(cold('y-x|', { x: [bad], y: [a] }).pipe(throwing)).toBe('y-#', { y: [a] }, boom);
    });
    expect(reports.map((r) => r.problem)).toEqual(['inconsistent-ohlc']);
  });
});
