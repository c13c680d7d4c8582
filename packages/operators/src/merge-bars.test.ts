import { describe, expect, expectTypeOf, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { filter, of } from 'rxjs';
import type { Observable, OperatorFunction } from 'rxjs';
import type { Bar, BarUpdate, GapMarker } from '@quoteflow/core';
import { isBarUpdate } from './is-bar-update.js';
import { mergeBars } from './merge-bars.js';
import type { MergeBarsInput, MergeBarsOutput, SeriesReset } from './bar-merger-types.js';
import { MIN, T0, answer, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';
const b = (k: number, close = 1): Bar => bar(C, 1, T0 + k * MIN, close);
const u = (x: Bar, final: boolean, revision: number): BarUpdate => {
  const { type: _t, ...rest } = x;
  return { ...rest, type: 'bar-update', final, revision };
};
const merge = (options = {}) => mergeBars({ graceMs: 5_000, ...options });
const testScheduler = () => new TestScheduler((a, e) => expect(a).toEqual(e));

// The merger has no clock: frames here are only the order of inputs and outputs.
describe('mergeBars', () => {
  it('completes at once on an empty source', () => {
    testScheduler().run(({ cold, expectObservable }) =>
      expectObservable(cold<MergeBarsInput>('|').pipe(merge())).toBe('|'),
    );
  });

  it('never emits on a source that never emits', () => {
    testScheduler().run(({ cold, expectObservable }) =>
      expectObservable(cold<MergeBarsInput>('-').pipe(merge())).toBe('-'),
    );
  });

  it('emits one forming bar and completes without closing it', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: b(0) }).pipe(merge())).toBe('a|', { a: u(b(0), false, 0) });
    });
  });

  it('emits the finals, updates and forwarded markers of many inputs in order, each when its input arrives', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const first = answer(T0 + MIN + 1_000, b(0), b(1));
      const second = answer(T0 + MIN + 2_000, b(1, 2));
      const third = answer(T0 + 2 * MIN + 1_000, b(1, 2), b(2));
      const marker: GapMarker = {
        type: 'gap',
        code: C,
        klineType: 1,
        fromMs: undefined,
        toMs: undefined,
        reason: 'reconnect',
      };
      const src = cold<MergeBarsInput>('a 9ms b 9ms m 9ms c 9ms |', {
        a: first,
        b: second,
        m: marker,
        c: third,
      });
      expectObservable(src.pipe(merge())).toBe('(xy) 6ms z 9ms m 9ms (fw) 6ms |', {
        x: u(first[0]!, true, 0),
        y: u(first[1]!, false, 0),
        z: u(second[0]!, false, 1),
        m: marker,
        f: u(third[0]!, true, 2),
        w: u(third[1]!, false, 0),
      });
    });
  });

  it('closes bars held behind a re-read when the re-read arrives, then updates the forming bar', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const forming = answer(T0 + 1_000, b(0));
      const skipped = answer(T0 + 2 * MIN + 1_000, b(1), b(2));
      const reread = answer(T0 + 2 * MIN + 2_000, b(0, 7), b(1), b(2));
      const src = cold('a 9ms b 9ms c', { a: forming, b: skipped, c: reread });
      expectObservable(src.pipe(merge())).toBe('a 9ms g 9ms (fzw)', {
        a: u(forming[0]!, false, 0),
        g: { type: 'gap', code: C, klineType: 1, fromMs: T0, toMs: T0 + MIN, reason: 'unconfirmed' },
        f: u(reread[0]!, true, 1),
        z: u(reread[1]!, true, 0),
        w: u(reread[2]!, false, 0),
      });
    });
  });

  it('sends no forming update of a series while an older bar is owed, then its finals in order and the newest forming values', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const five = (close: number): Bar => bar(C, 2, T0, close); // another series: not held
      const first = answer(T0 + 1_000, b(0), five(1));
      // Bar 1 never seen: bars missing between 0 and 2, and bar 0 unconfirmed.
      const skipped = answer(T0 + 3 * MIN + 1_000, b(2, 2), b(3, 3));
      const meanwhile = answer(T0 + 3 * MIN + 2_000, b(3, 4), five(2));
      const reread = answer(T0 + 3 * MIN + 3_000, b(0, 9), b(1), b(2, 2), b(3, 5));
      const src = cold('a 9ms b 9ms c 9ms d', { a: first, b: skipped, c: meanwhile, d: reread });
      const gap = (reason: string, toMs: number): GapMarker => ({
        type: 'gap',
        code: C,
        klineType: 1,
        fromMs: T0,
        toMs,
        reason,
      });
      expectObservable(src.pipe(merge())).toBe('(xe) 6ms (mg) 6ms f 9ms (0123)', {
        x: u(first[0]!, false, 0),
        e: u(first[1]!, false, 0),
        m: gap('missing-bars', T0 + 2 * MIN),
        g: gap('unconfirmed', T0 + 2 * MIN),
        f: u(meanwhile[1]!, false, 1),
        0: u(reread[0]!, true, 1),
        1: u(reread[1]!, true, 0),
        2: u(reread[2]!, true, 0),
        3: u(reread[3]!, false, 0),
      });
    });
  });

  it('forwards a source error', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('source failed');
      expectObservable(cold('a-#', { a: b(0) }, boom).pipe(merge())).toBe(
        'a-#',
        { a: u(b(0), false, 0) },
        boom,
      );
    });
  });

  it('unsubscribes from the source on early unsubscribe', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold('a 5ms b', { a: b(0), b: b(0, 2) });
      expectObservable(src.pipe(merge()), '^ 3ms !').toBe('a', { a: u(b(0), false, 0) });
      expectSubscriptions(src.subscriptions).toBe('^ 3ms !');
    });
  });

  it('errors the output when onReport or calendarOf throws', () => {
    const boom = new Error('callback failed');
    const thrower = () => {
      throw boom;
    };
    testScheduler().run(({ cold, expectObservable }) => {
      const src = cold('a-b-a', { a: b(0), b: { ...b(1), high: Number.NaN } });
      expectObservable(src.pipe(merge({ onReport: thrower }))).toBe('a-#', { a: u(b(0), false, 0) }, boom);
      expectObservable(cold('a', { a: b(0) }).pipe(merge({ calendarOf: thrower }))).toBe('#', {}, boom);
    });
  });

  it('gives every subscription its own state', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const rows = answer(T0 + MIN + 1_000, b(0), b(1));
      const merged = cold('(a|)', { a: rows }).pipe(merge());
      const want = { x: u(rows[0]!, true, 0), y: u(rows[1]!, false, 0) };
      expectObservable(merged).toBe('(xy|)', want);
      expectObservable(merged).toBe('(xy|)', want);
    });
  });

  it('rejects a bad option when the operator is built, before any subscription', () => {
    expect(() => mergeBars({ graceMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'graceMs' }),
    );
  });
});

describe('mergeBars types', () => {
  it('takes bars, batches, gap markers and resets and narrows its output with isBarUpdate', () => {
    expectTypeOf(mergeBars()).toEqualTypeOf<
      OperatorFunction<Bar | readonly Bar[] | GapMarker | SeriesReset, BarUpdate | GapMarker>
    >();
    const out = of<MergeBarsOutput>().pipe(filter(isBarUpdate));
    expectTypeOf(out).toEqualTypeOf<Observable<BarUpdate>>();
  });
});
