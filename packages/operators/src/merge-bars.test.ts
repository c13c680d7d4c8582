import { describe, expect, expectTypeOf, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { filter, of, take } from 'rxjs';
import type { Observable, OperatorFunction } from 'rxjs';
import { isBarUpdate } from './is-bar-update.js';
import type { Bar, BarUpdate, GapMarker } from '@quoteflow/core';
import { mergeBars } from './merge-bars.js';
import type { MergeBarsOutput } from './bar-merger.js';
import { MIN, T0, bar, offsetScheduler } from '../test-support/bars.js';

const C = 'BTCUSDT';
const b = (k: number, close = 1): Bar => bar(C, 1, T0 + k * MIN, close);
const u = (x: Bar, final: boolean, revision: number): BarUpdate => {
  const { type: _t, ...rest } = x;
  return { ...rest, type: 'bar-update', final, revision };
};

function setup() {
  const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
  // Virtual time 0 is 10 s into bar 0's minute; with 5 s grace bar 0 closes at virtual 55 s.
  const scheduler = offsetScheduler(ts, T0 + 10_000);
  return { ts, merge: (opts = {}) => mergeBars({ graceMs: 5_000, scheduler, ...opts }) };
}

describe('mergeBars', () => {
  it('completes at once on an empty source', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => expectObservable(cold<Bar>('|').pipe(merge())).toBe('|'));
  });

  it('never emits on a source that never emits', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => expectObservable(cold<Bar>('-').pipe(merge())).toBe('-'));
  });

  it('emits one forming bar and completes without closing it', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: b(0) }).pipe(merge())).toBe('a|', { a: u(b(0), false, 0) });
    });
  });

  it('closes the forming bar when its period end plus grace passes on the scheduler clock', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('a', { a: b(0) }).pipe(merge())).toBe('a 54999ms f', {
        a: u(b(0), false, 0),
        f: u(b(0), true, 1),
      });
    });
  });

  it('re-arms the timer for the next forming bar, and closes early when a newer bar appears', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      // t=0 bar0; t=20s bar0 changed; t=30s bar1 (bar0 closes); bar1 closes at 60+65-10 = 115 s.
      const src = cold('a 19999ms b 9999ms c', { a: [b(0)], b: [b(0, 2)], c: [b(0, 2), b(1)] });
      expectObservable(src.pipe(merge())).toBe('a 19999ms b 9999ms (cd) 84996ms e', {
        a: u(b(0), false, 0),
        b: u(b(0, 2), false, 1),
        c: u(b(0, 2), true, 2),
        d: u(b(1), false, 0),
        e: u(b(1), true, 1),
      });
    });
  });

  it('emits many series and gap markers in order', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      const src = cold('a 9ms b 9ms |', { a: [b(-3), b(0)], b: [b(0, 2), b(1)] });
      const outs: Record<string, MergeBarsOutput> = {
        a: u(b(-3), true, 0),
        g: { type: 'gap', code: C, klineType: 1, fromMs: T0 - 2 * MIN, toMs: T0, reason: 'missing-bars' },
        b: u(b(0), false, 0),
        c: u(b(0, 2), true, 1),
        d: u(b(1), false, 0),
      };
      expectObservable(src.pipe(merge())).toBe('(agb) 5ms (cd) 6ms |', outs);
    });
  });

  it('forwards a source error and cancels the timer', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('a-#', { a: b(0) }).pipe(merge())).toBe('a-#', { a: u(b(0), false, 0) });
    });
  });

  it('stops the source and the close timer on early unsubscribe', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold('a', { a: b(0) });
      expectObservable(src.pipe(merge()), '^ 1000ms !').toBe('a', { a: u(b(0), false, 0) });
      expectSubscriptions(src.subscriptions).toBe('^ 1000ms !');
    });
  });

  it('errors the output when a user callback throws', () => {
    const { ts, merge } = setup();
    const boom = new Error('onReport failed');
    ts.run(({ cold, expectObservable }) => {
      const onReport = () => {
        throw boom;
      };
      const src = cold('a-b-a', { a: b(0), b: { ...b(1), high: Number.NaN } });
      expectObservable(src.pipe(merge({ onReport }))).toBe('a-#', { a: u(b(0), false, 0) }, boom);
      const calendarOf = () => {
        throw boom;
      };
      expectObservable(cold('a', { a: b(0) }).pipe(merge({ calendarOf }))).toBe('#', {}, boom);
    });
  });

  it('gives every subscription its own state', () => {
    const { ts, merge } = setup();
    ts.run(({ cold, expectObservable }) => {
      const merged = cold('(a|)', { a: [b(0), b(1)] }).pipe(merge());
      const want = { x: u(b(0), true, 0), y: u(b(1), false, 0) };
      expectObservable(merged).toBe('(xy|)', want);
      expectObservable(merged).toBe('(xy|)', want);
    });
  });
});

describe('mergeBars teardown', () => {
  it('leaves no timer behind when the consumer unsubscribes while a timed close is emitted', () => {
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    const base = offsetScheduler(ts, T0 + 10_000);
    let timers = 0;
    const scheduler = {
      now: () => base.now(),
      schedule: (...args: Parameters<typeof base.schedule>) => (timers++, base.schedule(...args)),
    } as typeof base;
    ts.run(({ cold, expectObservable }) => {
      // Two series: BTC's bar closes at 55 s, ETH's at 115 s. The consumer takes BTC's final and
      // unsubscribes while it is being emitted; no timer for ETH may be armed after that.
      const src = cold('a', { a: [b(0), bar('ETHUSDT', 1, T0, 1), bar('ETHUSDT', 1, T0 + MIN, 1)] });
      const finals = src.pipe(
        mergeBars({ graceMs: 5_000, scheduler }),
        filter((o) => o.type === 'bar-update' && o.final && o.code === C),
        take(1),
      );
      expectObservable(finals).toBe('55000ms (f|)', { f: u(b(0), true, 1) });
    });
    expect(timers).toBe(1);
  });
});

describe('mergeBars types', () => {
  it('takes bars, batches and gap markers and narrows its output with isBarUpdate', () => {
    expectTypeOf(mergeBars()).toEqualTypeOf<
      OperatorFunction<Bar | readonly Bar[] | GapMarker, BarUpdate | GapMarker>
    >();
    const out = of<MergeBarsOutput>().pipe(filter(isBarUpdate));
    expectTypeOf(out).toEqualTypeOf<Observable<BarUpdate>>();
  });
});
