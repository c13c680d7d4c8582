import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Bar, BarUpdate, GapMarker } from '@quoteflow/core';
import { createBarMerger } from './bar-merger.js';
import type { BarMergerOptions, MergeBarsInput, MergeBarsOutput } from './bar-merger.js';
import type { BarReport } from './normalize-bars.js';
import { seriesKey } from './series-key.js';
import { MIN, T0, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';

function harness(options: BarMergerOptions = {}) {
  const merger = createBarMerger({ graceMs: 5_000, ...options });
  let out: MergeBarsOutput[] = [];
  const emit = (o: MergeBarsOutput) => out.push(o);
  return {
    merger,
    push(input: MergeBarsInput, now: number | (() => number)) {
      out = [];
      merger.push(input, now, emit);
      return out;
    },
    expire(nowMs: number) {
      out = [];
      merger.expire(nowMs, emit);
      return out;
    },
  };
}

/** Compact view of outputs: `F@k#r` final, `U@k#r` forming update, `G@a-b` gap (k = minutes after T0). */
function view(outs: readonly MergeBarsOutput[]): string[] {
  return outs.map((o) =>
    o.type === 'gap'
      ? `G@${((o.fromMs ?? 0) - T0) / MIN}-${((o.toMs ?? 0) - T0) / MIN}`
      : `${o.final ? 'F' : 'U'}@${(o.tsMs - T0) / MIN}#${o.revision}`,
  );
}

const b = (k: number, close = 1, code = C) => bar(code, 1, T0 + k * MIN, close);

describe('createBarMerger', () => {
  it('emits closed history bars once as final and the forming bar as revision 0', () => {
    const h = harness();
    expect(view(h.push([b(4), b(3), b(2), b(1), b(0)], T0 + 4 * MIN + 1000))).toEqual([
      'F@0#0',
      'F@1#0',
      'F@2#0',
      'F@3#0',
      'U@4#0',
    ]);
  });

  it('upserts the forming bar with increasing revisions and closes it when a newer bar appears', () => {
    const h = harness();
    h.push([b(0), b(1)], T0 + MIN + 1000);
    expect(view(h.push([b(0), b(1, 2)], T0 + MIN + 2000))).toEqual(['U@1#1']);
    expect(view(h.push([b(0), b(1, 2)], T0 + MIN + 3000))).toEqual([]); // unchanged: nothing
    expect(view(h.push([b(1, 3), b(2)], T0 + 2 * MIN + 1000))).toEqual(['F@1#2', 'U@2#0']);
    const final = h.push([b(2), b(3)], T0 + 3 * MIN)[0] as BarUpdate;
    expect(final).toMatchObject({
      type: 'bar-update',
      final: true,
      tsMs: T0 + 2 * MIN,
      close: 1,
      revision: 1,
    });
  });

  it('closes the forming bar when its period end plus grace passes', () => {
    const h = harness({ graceMs: 5_000 });
    h.push(b(0), T0 + 1000);
    expect(h.merger.nextDeadlineMs()).toBe(T0 + MIN + 5_000);
    expect(view(h.expire(T0 + MIN + 4_999))).toEqual([]);
    expect(view(h.expire(T0 + MIN + 5_000))).toEqual(['F@0#1']);
    expect(view(h.expire(T0 + 10 * MIN))).toEqual([]);
    expect(view(h.push([b(0, 9), b(1)], T0 + MIN + 6_000))).toEqual(['U@1#0']); // never re-emits bar 0
  });

  it('closes a bar at once when it arrives after its period end plus grace', () => {
    const h = harness();
    expect(view(h.push([b(0), b(1)], T0 + 10 * MIN))).toEqual(['F@0#0', 'F@1#0']);
  });

  it('reads a clock function only when a new bar start appears', () => {
    const h = harness();
    let reads = 0;
    const clock = () => {
      reads++;
      return T0 + 1000;
    };
    h.push(b(0), clock);
    h.push(b(0, 2), clock);
    h.push(b(0, 3), clock);
    expect(reads).toBe(1);
    expect(view(h.push([b(0, 4), b(1)], clock))).toEqual(['F@0#3', 'U@1#0']);
    expect(reads).toBe(2);
  });

  it('reports a correction of an already closed bar as late', () => {
    const reports: BarReport[] = [];
    const h = harness({ onReport: (r) => reports.push(r) });
    h.push(b(0), T0 + 1000);
    h.expire(T0 + 2 * MIN);
    h.push([b(0, 1), b(1)], T0 + 2 * MIN); // same values: silent
    expect(reports).toEqual([]);
    h.push([b(1), b(2)], T0 + 3 * MIN);
    h.push([b(1, 7), b(2)], T0 + 3 * MIN);
    expect(reports).toEqual([expect.objectContaining({ problem: 'late', tsMs: T0 + MIN })]);
  });

  it('reports the gap between history and live bars, then accepts the backfill once', () => {
    const h = harness();
    h.push([b(0), b(1), b(2)], T0 + 2 * MIN + 1000);
    const out = h.push([b(6), b(7)], T0 + 7 * MIN + 1000);
    expect(view(out)).toEqual(['F@2#1', 'G@3-6', 'F@6#0', 'U@7#0']);
    expect(out[1]).toEqual({
      type: 'gap',
      code: C,
      klineType: 1,
      fromMs: T0 + 3 * MIN,
      toMs: T0 + 6 * MIN,
      reason: 'missing-bars',
    });
    h.push([b(7), b(8)], T0 + 8 * MIN + 1000); // the series moves on before the backfill
    expect(view(h.push([b(2), b(3), b(4), b(5), b(6)], T0 + 8 * MIN + 2000))).toEqual([
      'F@3#0',
      'F@4#0',
      'F@5#0',
    ]);
    expect(view(h.push([b(3), b(4), b(5)], T0 + 8 * MIN + 3000))).toEqual([]);
  });

  it('seeds the last closed bar per series so a restart neither repeats nor loses bars', () => {
    const h = harness({ lastClosed: new Map([[seriesKey(C, 1), T0 + 2 * MIN]]) });
    expect(view(h.push([b(0), b(1), b(2), b(3), b(4), b(5)], T0 + 5 * MIN + 1000))).toEqual([
      'F@3#0',
      'F@4#0',
      'U@5#0',
    ]);
    expect(h.merger.lastClosed().get(seriesKey(C, 1))).toBe(T0 + 4 * MIN);
    const late = harness({ lastClosed: new Map([[seriesKey(C, 1), T0]]) });
    expect(view(late.push([b(3), b(4)], T0 + 4 * MIN + 1000))).toEqual(['G@1-3', 'F@3#0', 'U@4#0']);
  });

  it('keeps unrelated seeds in lastClosed()', () => {
    const h = harness({ lastClosed: new Map([[seriesKey('ETHUSDT', 2), 123]]) });
    expect(h.merger.lastClosed()).toEqual(new Map([[seriesKey('ETHUSDT', 2), 123]]));
  });

  it('forwards an input gap marker and opens the series after it without a second gap report', () => {
    const h = harness();
    h.push([b(0), b(1)], T0 + MIN + 1000);
    const marker: GapMarker = {
      type: 'gap',
      code: C,
      klineType: undefined,
      fromMs: undefined,
      toMs: undefined,
      reason: 'reconnect',
    };
    expect(h.push(marker, T0 + MIN + 2000)).toEqual([marker]);
    expect(view(h.push([b(5), b(6)], T0 + 6 * MIN + 1000))).toEqual(['F@1#1', 'F@5#0', 'U@6#0']);
    expect(view(h.push([b(8)], T0 + 8 * MIN + 1000))).toEqual(['F@6#1', 'G@7-8', 'U@8#0']);
  });

  it('keeps series of different codes and kline types apart', () => {
    const h = harness();
    const out = h.push(
      [b(1, 1, 'ETHUSDT'), b(0), bar(C, 2, T0, 5), b(0, 1, 'ETHUSDT'), b(1)],
      T0 + MIN + 1000,
    );
    expect(
      out.map((o) =>
        o.type === 'gap' ? 'gap' : `${o.code}/${o.klineType}@${(o.tsMs - T0) / MIN}${o.final ? 'F' : 'U'}`,
      ),
    ).toEqual(['BTCUSDT/1@0F', 'ETHUSDT/1@0F', 'BTCUSDT/1@1U', 'BTCUSDT/2@0U', 'ETHUSDT/1@1U']);
  });

  it('drops and reports invalid rows', () => {
    const reports: BarReport[] = [];
    const h = harness({ onReport: (r) => reports.push(r) });
    expect(h.push([{ ...b(0), close: Number.NaN }], T0)).toEqual([]);
    expect(reports.map((r) => r.problem)).toEqual(['bad-price']);
  });

  it('sees no gap across the lunch break and the weekend of a stock', () => {
    const sh = (y: number, mo: number, d: number, hh: number, mm: number) =>
      Date.UTC(y, mo - 1, d, hh - 8, mm); // Asia/Shanghai
    const h = harness();
    const m = (ts: number) => bar('600416.SH', 1, ts, 1);
    const out = h.push(
      [
        m(sh(2024, 3, 15, 11, 29)),
        m(sh(2024, 3, 15, 13, 0)),
        m(sh(2024, 3, 15, 14, 59)),
        m(sh(2024, 3, 18, 9, 30)),
      ],
      sh(2024, 3, 18, 9, 30),
    );
    expect(out.filter((o) => o.type === 'gap')).toEqual([
      expect.objectContaining({ fromMs: sh(2024, 3, 15, 13, 1), toMs: sh(2024, 3, 15, 14, 59) }),
    ]);
    const d = harness();
    const day = (dd: number) => bar('600416.SH', 8, sh(2024, 3, dd, 0, 0), 1);
    const daily = d.push([day(14), day(15), day(18), day(20)], sh(2024, 3, 20, 10, 0));
    expect(daily.filter((o) => o.type === 'gap')).toEqual([
      expect.objectContaining({ fromMs: sh(2024, 3, 19, 0, 0), toMs: sh(2024, 3, 20, 0, 0) }),
    ]);
  });

  it('rejects a negative grace period', () => {
    expect(() => createBarMerger({ graceMs: -1 })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'graceMs' }),
    );
  });
});

// ---- property tests against a naive reference ------------------------------------------------

type Event =
  | { kind: 'push'; bars: Bar[]; advanceMs: number }
  | { kind: 'expire'; advanceMs: number }
  | { kind: 'gap'; code: string; advanceMs: number };

const GRACE = 5_000;

interface RefSeries {
  watermark: number;
  forming: { bar: Bar; rev: number; emitted: Bar | undefined } | undefined;
  gaps: { from: number; to: number }[];
  skip: boolean;
}

const same = (x: Bar, y: Bar) =>
  x.open === y.open &&
  x.high === y.high &&
  x.low === y.low &&
  x.close === y.close &&
  x.volume === y.volume &&
  x.turnover === y.turnover;
const upd = (x: Bar, final: boolean, revision: number): BarUpdate => {
  const { type: _t, ...rest } = x;
  return { ...rest, type: 'bar-update', final, revision };
};

/** A straightforward re-statement of the merge rules for 24-hour 1-minute series, one output list per series. */
function referenceMerge(events: readonly Event[]): Map<string, MergeBarsOutput[]> {
  const out = new Map<string, MergeBarsOutput[]>();
  const series = new Map<string, RefSeries>();
  const get = (code: string) => {
    if (!series.has(code))
      series.set(code, { watermark: -Infinity, forming: undefined, gaps: [], skip: false });
    if (!out.has(code)) out.set(code, []);
    return [series.get(code) as RefSeries, out.get(code) as MergeBarsOutput[]] as const;
  };
  const deadline = (x: Bar) => x.tsMs + MIN + GRACE;
  let now = T0;
  for (const ev of events) {
    now += ev.advanceMs;
    if (ev.kind === 'gap') {
      const [s, o] = get(ev.code);
      s.skip = true;
      o.push({
        type: 'gap',
        code: ev.code,
        klineType: undefined,
        fromMs: undefined,
        toMs: undefined,
        reason: 'test',
      });
      continue;
    }
    if (ev.kind === 'expire') {
      for (const [code, s] of series) {
        if (s.forming !== undefined && now >= deadline(s.forming.bar)) {
          get(code)[1].push(upd(s.forming.bar, true, s.forming.rev));
          s.watermark = s.forming.bar.tsMs;
          s.forming = undefined;
        }
      }
      continue;
    }
    // Last row wins among equal starts; series by code, then time.
    const lastOfStart = new Map<string, Bar>();
    for (const x of ev.bars) {
      lastOfStart.delete(`${x.code}@${x.tsMs}`);
      lastOfStart.set(`${x.code}@${x.tsMs}`, x);
    }
    const rows = [...lastOfStart.values()].sort((x, y) =>
      x.code < y.code ? -1 : x.code > y.code ? 1 : x.tsMs - y.tsMs,
    );
    const touched: string[] = [];
    for (const row of rows) {
      const [s, o] = get(row.code);
      const f = s.forming;
      if (f !== undefined && row.tsMs === f.bar.tsMs) {
        f.bar = row;
        touched.push(row.code);
      } else if ((f !== undefined && row.tsMs > f.bar.tsMs) || (f === undefined && row.tsMs > s.watermark)) {
        if (f !== undefined) {
          o.push(upd(f.bar, true, f.rev));
          s.watermark = f.bar.tsMs;
        }
        if (!s.skip && s.watermark !== -Infinity && row.tsMs > s.watermark + MIN) {
          o.push({
            type: 'gap',
            code: row.code,
            klineType: 1,
            fromMs: s.watermark + MIN,
            toMs: row.tsMs,
            reason: 'missing-bars',
          });
          s.gaps.push({ from: s.watermark + MIN, to: row.tsMs });
        }
        s.skip = false;
        s.forming = { bar: row, rev: 0, emitted: undefined };
        touched.push(row.code);
      } else if (row.tsMs > s.watermark) {
        o.push(upd(row, true, 0));
        s.watermark = row.tsMs;
        const g = s.gaps.find((x) => x.from <= row.tsMs && row.tsMs < x.to);
        if (g !== undefined) g.from = row.tsMs + 1;
      } else {
        const g = s.gaps.find((x) => x.from <= row.tsMs && row.tsMs < x.to);
        if (g !== undefined) {
          o.push(upd(row, true, 0));
          g.from = row.tsMs + 1;
        }
      }
    }
    for (const code of new Set(touched)) {
      const [s, o] = get(code);
      const f = s.forming;
      if (f === undefined || (f.emitted !== undefined && same(f.emitted, f.bar))) continue;
      // The clock is read for a new bar start only; an update of an open bar waits for expire.
      if (f.emitted === undefined && now >= deadline(f.bar)) {
        o.push(upd(f.bar, true, f.rev));
        s.watermark = f.bar.tsMs;
        s.forming = undefined;
      } else {
        o.push(upd(f.bar, false, f.rev++));
        f.emitted = f.bar;
      }
    }
  }
  return out;
}

const arbBar = fc
  .record({
    code: fc.constantFrom('BTCUSDT', 'ETHUSDT'),
    slot: fc.integer({ min: 0, max: 14 }),
    close: fc.integer({ min: 1, max: 3 }),
    volume: fc.integer({ min: 0, max: 2 }),
  })
  .map(({ code, slot, close, volume }) => bar(code, 1, T0 + slot * MIN, close, { volume }));

const arbEvent: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('push' as const),
      bars: fc.array(arbBar, { minLength: 1, maxLength: 4 }),
      advanceMs: fc.integer({ min: 0, max: 50_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('expire' as const),
      advanceMs: fc.integer({ min: 0, max: 90_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('gap' as const),
      code: fc.constantFrom('BTCUSDT', 'ETHUSDT'),
      advanceMs: fc.constant(0),
    }),
  },
);

function runMerger(events: readonly Event[]): Map<string, MergeBarsOutput[]> {
  const merger = createBarMerger({ graceMs: GRACE });
  const out = new Map<string, MergeBarsOutput[]>();
  const emit = (o: MergeBarsOutput) => {
    if (!out.has(o.code)) out.set(o.code, []);
    out.get(o.code)?.push(o);
  };
  let now = T0;
  for (const ev of events) {
    now += ev.advanceMs;
    if (ev.kind === 'push') merger.push(ev.bars, now, emit);
    else if (ev.kind === 'expire') merger.expire(now, emit);
    else
      merger.push(
        {
          type: 'gap',
          code: ev.code,
          klineType: undefined,
          fromMs: undefined,
          toMs: undefined,
          reason: 'test',
        },
        now,
        emit,
      );
  }
  return out;
}

describe('createBarMerger properties', () => {
  it('matches the naive reference on random orders, duplicates, overlaps and clock moves', () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 25 }), (events) => {
        const got = runMerger(events);
        const want = referenceMerge(events);
        for (const code of new Set([...got.keys(), ...want.keys()]))
          expect(got.get(code) ?? []).toEqual(want.get(code) ?? []);
      }),
      { numRuns: 500 },
    );
  });

  it('emits each bar final at most once, with the last values seen and a revision after every update', () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 25 }), (events) => {
        const merger = createBarMerger({ graceMs: GRACE });
        const lastSeen = new Map<string, Bar>();
        const emissions = new Map<string, number>();
        const finals = new Set<string>();
        let now = T0;
        const emit = (o: MergeBarsOutput) => {
          if (o.type === 'gap') return;
          const key = `${o.code}@${o.tsMs}`;
          expect(finals.has(key)).toBe(false);
          expect(o.revision).toBe(emissions.get(key) ?? 0);
          emissions.set(key, o.revision + 1);
          const seen = lastSeen.get(key) as Bar;
          expect(same(seen, o as unknown as Bar)).toBe(true);
          if (o.final) finals.add(key);
        };
        for (const ev of events) {
          now += ev.advanceMs;
          if (ev.kind === 'push') {
            // Within one push the last row of a start wins, as documented.
            for (const x of ev.bars) lastSeen.set(`${x.code}@${x.tsMs}`, x);
            merger.push(ev.bars, now, emit);
          } else if (ev.kind === 'expire') merger.expire(now, emit);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('closes every bar but the newest when bars arrive in order, with no gap for contiguous data', () => {
    fc.assert(
      fc.property(fc.array(arbBar, { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), (rows, chunk) => {
        const sorted = [...rows].sort((x, y) => x.tsMs - y.tsMs).map((x) => ({ ...x, code: C }));
        const merger = createBarMerger({ graceMs: GRACE });
        const out: MergeBarsOutput[] = [];
        for (let i = 0; i < sorted.length; i += chunk)
          merger.push(sorted.slice(i, i + chunk), T0, (o) => out.push(o));
        const starts = [...new Set(sorted.map((x) => x.tsMs))];
        const finals = out.filter((o): o is BarUpdate => o.type === 'bar-update' && o.final);
        expect(finals.map((f) => f.tsMs)).toEqual(starts.slice(0, -1));
        for (const f of finals) expect(f.close).toBe(sorted.findLast((x) => x.tsMs === f.tsMs)?.close);
        const gaps = out.filter((o) => o.type === 'gap').length;
        const holes = starts.slice(1).filter((t, i) => t - (starts[i] as number) > MIN).length;
        expect(gaps).toBe(holes);
      }),
      { numRuns: 300 },
    );
  });
});
