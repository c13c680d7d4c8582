import { describe, expect, expectTypeOf, it } from 'vitest';
import { of } from 'rxjs';
import type { MonoTypeOperatorFunction, Observable } from 'rxjs';
import type { DepthTick } from '@quoteflow/core';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import { createSeqDeduper, dedupeBySeq } from './dedupe-by-seq.js';
import type { SeqTick } from './dedupe-by-seq.js';

const tick = (code: string, seq: bigint | undefined, tickTimeMs: number | undefined): SeqTick => ({
  code,
  seq,
  tickTimeMs,
});

function marbles(run: (helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0]) => void): void {
  new TestScheduler((a, b) => expect(a).toEqual(b)).run(run);
}

describe('createSeqDeduper', () => {
  it('drops a tick whose seq repeats or goes back for the same code', () => {
    const d = createSeqDeduper();
    expect(d.accept(tick('A', 10n, 1))).toBe(true);
    expect(d.accept(tick('A', 10n, 1))).toBe(false);
    expect(d.accept(tick('A', 9n, 2))).toBe(false);
    expect(d.accept(tick('A', 11n, 2))).toBe(true);
  });

  it('keeps codes apart', () => {
    const d = createSeqDeduper();
    expect(d.accept(tick('A', 10n, 1))).toBe(true);
    expect(d.accept(tick('B', 10n, 1))).toBe(true);
    expect(d.accept(tick('B', 5n, 1))).toBe(false);
  });

  it('accepts a sequence reset: a much smaller seq with a later tick time', () => {
    const d = createSeqDeduper();
    expect(d.accept(tick('A', 30_686_349n, 1000))).toBe(true);
    expect(d.accept(tick('A', 3n, 999))).toBe(false); // earlier time: stale, not a reset
    expect(d.accept(tick('A', 30_686_000n, 2000))).toBe(false); // later but only slightly smaller
    expect(d.accept(tick('A', 3n, 2000))).toBe(true);
    expect(d.accept(tick('A', 4n, 2001))).toBe(true); // the new baseline
    expect(d.accept(tick('A', 3n, 2002))).toBe(false);
  });

  it('handles seq values beyond Number precision', () => {
    const d = createSeqDeduper();
    expect(d.accept(tick('A', 9_007_199_254_740_993n, 1))).toBe(true);
    expect(d.accept(tick('A', 9_007_199_254_740_992n, 1))).toBe(false);
    expect(d.accept(tick('A', 9_007_199_254_740_994n, 1))).toBe(true);
  });

  it('compares ticks without seq by tick time by default', () => {
    const d = createSeqDeduper();
    expect(d.accept(tick('A', undefined, 100))).toBe(true);
    expect(d.accept(tick('A', undefined, 100))).toBe(false);
    expect(d.accept(tick('A', undefined, 101))).toBe(true);
    expect(d.accept(tick('B', undefined, undefined))).toBe(true);
    expect(d.accept(tick('B', undefined, undefined))).toBe(true); // nothing to compare: kept
  });

  it('passes or drops ticks without seq when told to', () => {
    const pass = createSeqDeduper({ withoutSeq: 'pass' });
    expect(pass.accept(tick('A', undefined, 1))).toBe(true);
    expect(pass.accept(tick('A', undefined, 1))).toBe(true);
    const drop = createSeqDeduper({ withoutSeq: 'drop' });
    expect(drop.accept(tick('A', undefined, 1))).toBe(false);
  });

  it('remembers at most maxCodes codes and treats a forgotten code as new', () => {
    const d = createSeqDeduper({ maxCodes: 10 });
    for (let i = 0; i < 1000; i++) {
      d.accept(tick(`C${i}`, 5n, 1));
      expect(d.size).toBeLessThanOrEqual(10);
    }
    expect(d.accept(tick('C999', 5n, 1))).toBe(false); // recent: remembered
    expect(d.accept(tick('C0', 5n, 1))).toBe(true); // long forgotten
  });

  it('keeps a code that is seen often although many others pass', () => {
    const d = createSeqDeduper({ maxCodes: 4 });
    let seq = 1n;
    d.accept(tick('HOT', seq, 1));
    for (let i = 0; i < 100; i++) {
      d.accept(tick(`C${i}`, 1n, 1));
      expect(d.accept(tick('HOT', seq, 1))).toBe(false);
      seq++;
      expect(d.accept(tick('HOT', seq, 1))).toBe(true);
    }
  });

  it('rejects invalid options with QF_INVALID_OPTION', () => {
    expect(() => createSeqDeduper({ maxCodes: 1 })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'maxCodes' }),
    );
    expect(() => dedupeBySeq({ resetDivisor: 0n })).toThrow(
      expect.objectContaining({ option: 'resetDivisor' }),
    );
    expect(() => dedupeBySeq({ withoutSeq: 'x' as 'pass' })).toThrow(/withoutSeq/);
  });

  it('agrees with a naive reference on random streams (no eviction)', () => {
    const arbTick = fc.record({
      code: fc.constantFrom('A', 'B', 'C'),
      seq: fc.option(fc.bigInt({ min: 0n, max: 40n }), { nil: undefined, freq: 8 }),
      tickTimeMs: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 8 }),
    });
    fc.assert(
      fc.property(fc.array(arbTick, { maxLength: 80 }), (ticks) => {
        const d = createSeqDeduper();
        const got = ticks.map((t) => d.accept(t));
        expect(got).toEqual(reference(ticks));
      }),
      { numRuns: 300 },
    );
  });
});

/** Naive reference: scans every earlier accepted tick of the code. */
function reference(ticks: readonly SeqTick[]): boolean[] {
  const accepted: SeqTick[] = [];
  // The baseline of a code: its last accepted seq and tick time, rebuilt by scanning history.
  const baseline = (code: string) => {
    let seq: bigint | undefined;
    let time: number | undefined;
    let seen = false;
    for (const t of accepted) {
      if (t.code !== code) continue;
      seen = true;
      if (t.seq !== undefined) seq = t.seq;
      if (t.seq === undefined || t.tickTimeMs !== undefined) time = t.tickTimeMs ?? time;
      if (t.seq === undefined) time = t.tickTimeMs;
    }
    return { seen, seq, time };
  };
  return ticks.map((t) => {
    const b = baseline(t.code);
    let ok: boolean;
    if (!b.seen) ok = true;
    else if (t.seq === undefined)
      ok = t.tickTimeMs === undefined || b.time === undefined || t.tickTimeMs > b.time;
    else if (b.seq === undefined || t.seq > b.seq) ok = true;
    else
      ok = t.tickTimeMs !== undefined && b.time !== undefined && t.tickTimeMs > b.time && t.seq * 2n <= b.seq;
    if (ok) accepted.push(t);
    return ok;
  });
}

describe('dedupeBySeq', () => {
  const a1 = tick('A', 1n, 1);
  const a2 = tick('A', 2n, 2);
  const b1 = tick('B', 1n, 1);

  it('completes at once on an empty source', () => {
    marbles(({ cold, expectObservable }) => {
      expectObservable(cold<SeqTick>('|').pipe(dedupeBySeq())).toBe('|');
    });
  });

  it('never emits on a source that never emits', () => {
    marbles(({ cold, expectObservable }) => {
      expectObservable(cold<SeqTick>('-').pipe(dedupeBySeq())).toBe('-');
    });
  });

  it('passes one value', () => {
    marbles(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: a1 }).pipe(dedupeBySeq())).toBe('a|', { a: a1 });
    });
  });

  it('drops repeats among many values, keeping order', () => {
    marbles(({ cold, expectObservable }) => {
      const src = cold('a-a-b-c-a-c|', { a: a1, b: b1, c: a2 });
      expectObservable(src.pipe(dedupeBySeq())).toBe('a---b-c----|', { a: a1, b: b1, c: a2 });
    });
  });

  it('forwards a source error', () => {
    marbles(({ cold, expectObservable }) => {
      expectObservable(cold('a-#', { a: a1 }, new Error('boom')).pipe(dedupeBySeq())).toBe(
        'a-#',
        { a: a1 },
        new Error('boom'),
      );
    });
  });

  it('unsubscribes from the source on early unsubscribe', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold('a-b-c-d|', { a: a1, b: b1, c: a2, d: tick('A', 3n, 3) });
      expectObservable(src.pipe(dedupeBySeq()), '^--!').toBe('a-b', { a: a1, b: b1 });
      expectSubscriptions(src.subscriptions).toBe('^--!');
    });
  });

  it('starts fresh state for every subscription', () => {
    marbles(({ cold, expectObservable }) => {
      const deduped = cold('a-a|', { a: a1 }).pipe(dedupeBySeq());
      expectObservable(deduped).toBe('a--|', { a: a1 });
      expectObservable(deduped).toBe('a--|', { a: a1 });
    });
  });
});

describe('dedupeBySeq types', () => {
  it('keeps the element type of the stream', () => {
    expectTypeOf(dedupeBySeq<DepthTick>()).toEqualTypeOf<MonoTypeOperatorFunction<DepthTick>>();
    expectTypeOf(of(tick('A', 1n, 1)).pipe(dedupeBySeq())).toEqualTypeOf<Observable<SeqTick>>();
  });
});
