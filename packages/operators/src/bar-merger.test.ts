import { describe, expect, it } from 'vitest';
import { calendarOf } from '@quoteflow/core';
import type { Bar, BarUpdate, GapMarker, KlineType } from '@quoteflow/core';
import { createBarMerger } from './bar-merger.js';
import { MERGE_GAP_REASONS } from './bar-merger-types.js';
import type { BarMergerOptions, MergeBarsInput, MergeBarsOutput } from './bar-merger-types.js';
import type { BarReport } from './normalize-bars.js';
import { seriesKey } from './series-key.js';
import { MIN, T0, answer, bar } from '../test-support/bars.js';

const C = 'BTCUSDT';
const GRACE = 5_000;

function harness(options: BarMergerOptions = {}) {
  const reports: BarReport[] = [];
  const merger = createBarMerger({ graceMs: GRACE, onReport: (r) => reports.push(r), ...options });
  return {
    merger,
    reports,
    push(input: MergeBarsInput): MergeBarsOutput[] {
      const out: MergeBarsOutput[] = [];
      merger.push(input, (o) => out.push(o));
      return out;
    },
  };
}

/** Compact view for 24-hour series: `F@k#r` final, `U@k#r` forming, `G:reason@a-b` gap (k = minutes after T0). */
function view(outs: readonly MergeBarsOutput[]): string[] {
  return outs.map((o) =>
    o.type === 'gap'
      ? `G:${o.reason}@${((o.fromMs ?? 0) - T0) / MIN}-${((o.toMs ?? 0) - T0) / MIN}`
      : `${o.final ? 'F' : 'U'}@${(o.tsMs - T0) / MIN}#${o.revision}`,
  );
}

/** Bar `k` minutes after T0 of the 24-hour 1-minute series. */
const b = (k: number, close = 1, code = C) => bar(code, 1, T0 + k * MIN, close);
/** An instant `k` minutes plus `ms` after T0. */
const at = (k: number, ms = 0) => T0 + k * MIN + ms;

const finals = (outs: readonly MergeBarsOutput[]) =>
  outs.filter((o): o is BarUpdate => o.type === 'bar-update' && o.final);
const gaps = (outs: readonly MergeBarsOutput[]) => outs.filter((o): o is GapMarker => o.type === 'gap');

describe('createBarMerger: finality from one answer', () => {
  it('emits every bar of a history answer but the newest as final, in order, and the newest as forming revision 0', () => {
    const h = harness();
    const out = h.push(answer(at(4, 1000), b(4), b(3), b(2), b(1), b(0)));
    expect(view(out)).toEqual(['F@0#0', 'F@1#0', 'F@2#0', 'F@3#0', 'U@4#0']);
    expect(out[0]).toEqual({
      ...answer(at(4, 1000), b(0))[0],
      type: 'bar-update',
      final: true,
      revision: 0,
    });
  });

  it('updates the forming bar with a new revision per change and skips an unchanged repeat', () => {
    const h = harness();
    expect(view(h.push(answer(at(0, 1000), b(0, 1))))).toEqual(['U@0#0']);
    expect(view(h.push(answer(at(0, 2000), b(0, 2))))).toEqual(['U@0#1']);
    expect(view(h.push(answer(at(0, 3000), b(0, 2))))).toEqual([]);
    expect(h.merger.pending()).toEqual([
      {
        code: C,
        klineType: 1,
        tsMs: T0,
        readAtMs: at(0, 3000),
        unconfirmed: false,
        finalByCalendarAtMs: at(1, GRACE),
      },
    ]);
  });

  it('closes the forming bar with the values of an answer that holds it together with a newer bar', () => {
    const h = harness();
    h.push(answer(at(0, 1000), b(0, 1)));
    const out = h.push(answer(at(1, 500), b(0, 3), b(1, 1)));
    expect(view(out)).toEqual(['F@0#1', 'U@1#0']);
    expect(out[0]).toMatchObject({ close: 3, readAtMs: at(1, 500), receivedAtMs: at(1, 501) });
    expect(h.merger.lastClosed()).toEqual(new Map([[seriesKey(C, 1), T0]]));
  });

  it('treats bars of one answer pushed one by one like the answer pushed at once', () => {
    const h = harness();
    const [x, y] = answer(at(1, 500), b(0, 3), b(1, 1));
    expect(view(h.push(x!))).toEqual(['U@0#0']);
    expect(view(h.push(y!))).toEqual(['F@0#1', 'U@1#0']);
  });
});

describe('createBarMerger: finality from a newer bar seen earlier', () => {
  it('proves a bar by an answer read after an answer that showed a newer bar had arrived', () => {
    const h = harness();
    h.push(answer(at(0, 30_000), b(0, 1)));
    expect(view(h.push(answer({ readAtMs: at(1, 100), receivedAtMs: at(1, 900) }, b(1))))).toEqual([
      'G:unconfirmed@0-1',
    ]);
    const out = h.push(answer(at(1, 901), b(0, 5)));
    expect(view(out)).toEqual(['F@0#1', 'U@1#0']);
    expect(out[0]).toMatchObject({ close: 5, readAtMs: at(1, 901) });
  });

  it('takes a late-delivered answer as proof for a read sent after it arrived', () => {
    const h = harness();
    expect(view(h.push(answer(at(1, 901), b(0, 5))))).toEqual(['U@0#0']);
    const out = h.push(answer({ readAtMs: at(1, 100), receivedAtMs: at(1, 900) }, b(1)));
    expect(view(out)).toEqual(['F@0#1', 'U@1#0']);
    expect(out[0]).toMatchObject({ close: 5 });
  });

  it('does not take a concurrent read, sent before the newer bar arrived, as proof', () => {
    const h = harness();
    h.push(answer({ readAtMs: at(1, 100), receivedAtMs: at(1, 900) }, b(1)));
    // Sent while the answer with bar 1 was on its way: the service may have read bar 0 before it closed.
    expect(view(h.push(answer({ readAtMs: at(1, 899), receivedAtMs: at(1, 1500) }, b(0, 4))))).toEqual([
      'G:unconfirmed@0-1',
    ]);
    expect(view(h.push(answer({ readAtMs: at(1, 900), receivedAtMs: at(1, 1600) }, b(0, 5))))).toEqual([]);
    expect(h.merger.pending().map((p) => [(p.tsMs - T0) / MIN, p.unconfirmed])).toEqual([
      [0, true],
      [1, false],
    ]);
    // Bar 1's forming values went out before bar 0 was seen, and have not changed since.
    expect(view(h.push(answer({ readAtMs: at(1, 901), receivedAtMs: at(1, 1700) }, b(0, 6))))).toEqual([
      'F@0#0',
    ]);
  });
});

describe('createBarMerger: which read of a bar counts', () => {
  it('keeps an earlier-sent read whose answer holds a newer bar over a later-sent read that proves nothing', () => {
    const h = harness();
    // Sent later but answered before bar 1 appeared: bar 0's values may not be final.
    expect(view(h.push(answer({ readAtMs: at(0, 59_900), receivedAtMs: at(1, 200) }, b(0, 4))))).toEqual([
      'U@0#0',
    ]);
    // Sent earlier but answered after bar 1 appeared, so it holds bar 1 and bar 0's final values.
    const out = h.push(answer({ readAtMs: at(0, 59_800), receivedAtMs: at(1, 300) }, b(0, 5), b(1)));
    expect(view(out)).toEqual(['F@0#1', 'U@1#0']);
    expect(out[0]).toMatchObject({ close: 5, readAtMs: at(0, 59_800) });
  });

  it('keeps the read that proved a held bar over a later read that proves nothing', () => {
    const h = harness();
    h.push(answer(at(0, 1000), b(0)));
    h.push(answer({ readAtMs: at(2, 100), receivedAtMs: at(2, 900) }, b(1, 5), b(2))); // bar 1 proven, held behind 0
    h.push(answer({ readAtMs: at(2, 200), receivedAtMs: at(2, 800) }, b(1, 4))); // concurrent: proves nothing
    const out = h.push(answer(at(2, 2000), b(0, 9), b(1, 5)));
    expect(finals(out).map((f) => [(f.tsMs - T0) / MIN, f.close])).toEqual([
      [0, 9],
      [1, 5],
    ]);
  });
});

describe('createBarMerger: finality by the calendar', () => {
  it('proves a 24-hour 1-minute bar by a read at its end plus the grace, not 1 ms before', () => {
    const h = harness();
    expect(view(h.push(answer(at(1, GRACE - 1), b(0, 1))))).toEqual(['U@0#0']);
    expect(view(h.push(answer(at(1, GRACE), b(0, 2))))).toEqual(['F@0#1']);
  });

  // 2026-11-17 is a Tuesday; New York is on EST (UTC-5): the session closes at 21:00 UTC.
  const CLOSE = Date.UTC(2026, 10, 17, 21);
  const aapl = (klineType: KlineType, tsMs: number, close = 1) => bar('AAPL.US', klineType, tsMs, close);

  it.each([
    ['on a clock hour', Date.UTC(2026, 10, 17, 20)],
    ['at the half hour after the open', Date.UTC(2026, 10, 17, 20, 30)],
  ])(
    'proves the last hourly bar of a US session labelled %s by a read at the close plus the grace, not 1 ms before',
    (_, tsMs) => {
      const h = harness({ calendarOf });
      expect(view(h.push(answer(CLOSE + GRACE - 1, aapl(5, tsMs, 1))))).toHaveLength(1);
      expect(h.merger.pending()[0]?.finalByCalendarAtMs).toBe(CLOSE + GRACE);
      const out = h.push(answer(CLOSE + GRACE, aapl(5, tsMs, 2)));
      expect(finals(out)).toEqual([expect.objectContaining({ tsMs, close: 2, revision: 1 })]);
    },
  );

  it('proves the last 1-minute bar of a US session by a read at the close plus the grace', () => {
    const h = harness({ calendarOf });
    const last = Date.UTC(2026, 10, 17, 20, 59);
    expect(finals(h.push(answer(CLOSE + GRACE - 1, aapl(1, last))))).toEqual([]);
    expect(finals(h.push(answer(CLOSE + GRACE, aapl(1, last, 2))))).toEqual([
      expect.objectContaining({ tsMs: last, close: 2 }),
    ]);
  });

  it('waits for the session close, not the end of the bar as labelled, to prove an intraday stock bar', () => {
    // Where an intraday bar ends depends on the labelling, so only the day's close is certain.
    const h = harness({ calendarOf });
    const ten = Date.UTC(2026, 10, 17, 15); // 10:00 New York
    expect(finals(h.push(answer(ten + MIN + GRACE + 60_000, aapl(1, ten))))).toEqual([]);
    expect(h.merger.pending()[0]?.finalByCalendarAtMs).toBe(CLOSE + GRACE);
  });

  it.each([
    ['midnight UTC', Date.UTC(2026, 10, 17), CLOSE],
    ['midnight in New York', Date.UTC(2026, 10, 17, 5), CLOSE],
    ['the open', Date.UTC(2026, 10, 17, 14, 30), CLOSE],
    ['midnight UTC, in summer time', Date.UTC(2026, 6, 21), Date.UTC(2026, 6, 21, 20)],
    ['midnight in New York, in summer time', Date.UTC(2026, 6, 21, 4), Date.UTC(2026, 6, 21, 20)],
    ['the open, in summer time', Date.UTC(2026, 6, 21, 13, 30), Date.UTC(2026, 6, 21, 20)],
  ])(
    'proves a US daily bar labelled %s by a read at the close plus the grace, not 1 ms before',
    (_, tsMs, close) => {
      const h = harness({ calendarOf });
      expect(finals(h.push(answer(close + GRACE - 1, aapl(8, tsMs, 1))))).toEqual([]);
      expect(finals(h.push(answer(close + GRACE, aapl(8, tsMs, 2))))).toEqual([
        expect.objectContaining({ tsMs, close: 2, revision: 1 }),
      ]);
    },
  );
});

describe('createBarMerger: bars that need another read', () => {
  it('asks once to read a skipped bar again, holds the newer bars and releases them in order on a re-read', () => {
    const h = harness();
    h.push(answer(at(0, 1000), b(0, 1)));
    // Polls skipped the end of bar 0: the next answer already holds bars 1 and 2. Their values
    // wait behind bar 0, forming ones too: nothing of the series goes out ahead of its final.
    expect(view(h.push(answer(at(2, 1000), b(1, 2), b(2, 3))))).toEqual(['G:unconfirmed@0-1']);
    expect(view(h.push(answer(at(3, 1000), b(2, 3), b(3, 4))))).toEqual([]);
    // Only bar 0 needs another read: bars 1 and 2 are proven and wait behind it.
    expect(h.merger.pending().map((p) => [(p.tsMs - T0) / MIN, p.unconfirmed])).toEqual([
      [0, true],
      [1, false],
      [2, false],
      [3, false],
    ]);
    const out = h.push(answer(at(3, 2000), b(0, 9), b(1, 2), b(2, 3), b(3, 4)));
    expect(view(out)).toEqual(['F@0#1', 'F@1#0', 'F@2#0', 'U@3#0']);
    expect(finals(out).map((f) => f.close)).toEqual([9, 2, 3]);
    expect(h.merger.lastClosed().get(seriesKey(C, 1))).toBe(at(2));
  });

  it('emits an unconfirmed marker that a re-read of the named range answers', () => {
    const h = harness();
    h.push(answer(at(0, 1000), b(0)));
    const [marker] = gaps(h.push(answer(at(1, 1000), b(1))));
    expect(marker).toEqual({
      type: 'gap',
      code: C,
      klineType: 1,
      fromMs: at(0),
      toMs: at(1),
      reason: MERGE_GAP_REASONS.unconfirmed,
    });
  });

  it('drops an unconfirmed bar that a later answer covers without it and reports it as vanished', () => {
    const h = harness();
    h.push(answer(at(1, 1000), b(0), b(1)));
    h.push(answer(at(3, 1000), b(3)));
    expect(view(h.push(answer(at(3, 2000), b(0), b(2), b(3))))).toEqual(['F@2#0', 'U@3#0']);
    expect(h.reports).toEqual([
      expect.objectContaining({ problem: 'vanished', action: 'dropped', code: C, klineType: 1, tsMs: at(1) }),
    ]);
  });
});

describe('createBarMerger: gaps', () => {
  it('reports bars missing between two bars seen and holds the bars after them until one answer covers the gap', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(0), b(1), b(2)));
    expect(view(h.push(answer(at(6, 1000), b(5), b(6))))).toEqual([
      'G:missing-bars@2-5',
      'G:unconfirmed@2-5',
    ]);
    // Bar 2 alone proves itself (read after bar 5 arrived), but bar 5 waits for the missing ones.
    expect(view(h.push(answer(at(6, 2000), b(2, 4))))).toEqual(['F@2#1']);
    expect(view(h.push(answer(at(6, 3000), b(4), b(5), b(6))))).toEqual([]);
    expect(view(h.push(answer(at(6, 4000), b(2, 4), b(3), b(4), b(5), b(6))))).toEqual([
      'F@3#0',
      'F@4#0',
      'F@5#0',
      'U@6#0',
    ]);
  });

  it('holds a bar inside a reported gap until one answer covers the gap, so no bar before it is lost', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(1), b(2)));
    h.push(answer(at(6, 1000), b(5), b(6)));
    expect(view(h.push(answer(at(6, 1500), b(2))))).toEqual(['F@2#1']);
    // A page that ends at bar 4 proves it, but bar 3 has not been read: bar 4 waits.
    expect(view(h.push(answer(at(6, 2000), b(4))))).toEqual([]);
    expect(view(h.push(answer(at(6, 3000), b(2), b(3), b(4), b(5), b(6))))).toEqual([
      'F@3#0',
      'F@4#0',
      'F@5#0',
      'U@6#0',
    ]);
  });

  it('releases the bars held behind a gap when an input marker says history cannot reach back', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(1), b(2)));
    h.push(answer(at(6, 1000), b(5), b(6)));
    h.push(answer(at(6, 2000), b(2)));
    const marker: GapMarker = {
      type: 'gap',
      code: C,
      klineType: 1,
      fromMs: undefined,
      toMs: at(5),
      reason: 'history cannot reach back',
    };
    const out = h.push(marker);
    expect(out[0]).toBe(marker);
    expect(view(out.slice(1))).toEqual(['F@5#0', 'U@6#0']);
  });

  it('narrows a gap that an input marker cuts through to the part history can reach, then releases it when filled', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(1), b(2)));
    h.push(answer(at(9, 1000), b(8), b(9)));
    const marker: GapMarker = {
      type: 'gap',
      code: C,
      klineType: 1,
      fromMs: at(2),
      toMs: at(5),
      reason: 'history cannot reach back',
    };
    expect(finals(h.push(marker))).toEqual([]); // bars 5-7 are still unknown
    expect(h.reports).toEqual([expect.objectContaining({ problem: 'vanished', tsMs: at(2) })]);
    const out = h.push(answer(at(9, 2000), b(5), b(6), b(7), b(8), b(9)));
    expect(finals(out).map((u) => (u.tsMs - T0) / MIN)).toEqual([5, 6, 7, 8]);
  });

  it('forwards an input gap marker and opens the series after it without a gap report', () => {
    const h = harness();
    h.push(answer(at(1, 1000), b(0), b(1)));
    const marker: GapMarker = {
      type: 'gap',
      code: C,
      klineType: undefined,
      fromMs: undefined,
      toMs: undefined,
      reason: 'reconnect',
    };
    expect(h.push(marker)).toEqual([marker]);
    expect(view(h.push(answer(at(6, 1000), b(5), b(6))))).toEqual(['G:unconfirmed@1-5']);
    expect(view(h.push(answer(at(8, 1000), b(8))))).toEqual(['G:missing-bars@6-8']);
  });

  it('seeds the last closed bar per series so a restart never emits a bar again', () => {
    const h = harness({ lastClosed: new Map([[seriesKey(C, 1), at(2)]]) });
    expect(view(h.push(answer(at(5, 1000), b(0), b(1), b(2), b(3), b(4), b(5))))).toEqual([
      'F@3#0',
      'F@4#0',
      'U@5#0',
    ]);
    expect(h.merger.lastClosed().get(seriesKey(C, 1))).toBe(at(4));
  });

  it('reports the bars missing between the seed and the first bar seen and holds the bars after them', () => {
    const h = harness({ lastClosed: new Map([[seriesKey(C, 1), T0]]) });
    expect(view(h.push(answer(at(4, 1000), b(3), b(4))))).toEqual(['G:missing-bars@0-3']);
    expect(view(h.push(answer(at(4, 2000), b(0), b(1), b(2), b(3), b(4))))).toEqual([
      'F@1#0',
      'F@2#0',
      'F@3#0',
      'U@4#0',
    ]);
  });

  it('keeps seeds of series it never saw in lastClosed()', () => {
    const h = harness({ lastClosed: new Map([[seriesKey('ETHUSDT', 2), 123]]) });
    expect(h.merger.lastClosed()).toEqual(new Map([[seriesKey('ETHUSDT', 2), 123]]));
  });
});

describe('createBarMerger: no false missing-bars report under any labelling', () => {
  const sh = (d: number, hh: number, mm = 0) => Date.UTC(2024, 2, d, hh - 8, mm); // Asia/Shanghai, March 2024
  const ny = (d: number, hh: number, mm = 0) => Date.UTC(2026, 10, d, hh + 5, mm); // New York, November 2026 (EST)
  const SH = '600416.SH';
  const US = 'AAPL.US';
  // Fri 2024-03-15 and Mon 03-18 in Shanghai; Thu 2026-11-12, Fri 11-13 and Mon 11-16 in New York.
  const cases: [string, string, KlineType, number[]][] = [
    [
      'Shanghai minutes across the lunch break',
      SH,
      1,
      [sh(15, 11, 28), sh(15, 11, 29), sh(15, 13), sh(15, 13, 1)],
    ],
    [
      'Shanghai minutes across the weekend',
      SH,
      1,
      [sh(15, 14, 58), sh(15, 14, 59), sh(18, 9, 30), sh(18, 9, 31)],
    ],
    [
      'Shanghai hours on clock hours',
      SH,
      5,
      [sh(15, 9), sh(15, 10), sh(15, 11), sh(15, 13), sh(15, 14), sh(18, 9)],
    ],
    [
      'Shanghai hours from the open',
      SH,
      5,
      [sh(15, 9, 30), sh(15, 10, 30), sh(15, 13), sh(15, 14), sh(18, 9, 30)],
    ],
    ['US hours on clock hours', US, 5, [ny(13, 14), ny(13, 15), ny(16, 9), ny(16, 10), ny(16, 11)]],
    [
      'US hours from the open',
      US,
      5,
      [ny(13, 14, 30), ny(13, 15, 30), ny(16, 9, 30), ny(16, 10, 30), ny(16, 11, 30)],
    ],
    [
      'US days at midnight UTC',
      US,
      8,
      [Date.UTC(2026, 10, 12), Date.UTC(2026, 10, 13), Date.UTC(2026, 10, 16)],
    ],
    ['US days at midnight in New York', US, 8, [ny(12, 0), ny(13, 0), ny(16, 0)]],
    ['US days at the open', US, 8, [ny(12, 9, 30), ny(13, 9, 30), ny(16, 9, 30)]],
    [
      'Shanghai days at midnight UTC',
      SH,
      8,
      [Date.UTC(2024, 2, 14), Date.UTC(2024, 2, 15), Date.UTC(2024, 2, 18)],
    ],
    ['Shanghai days at midnight in Shanghai', SH, 8, [sh(14, 0), sh(15, 0), sh(18, 0)]],
    ['Shanghai days at the open', SH, 8, [sh(14, 9, 30), sh(15, 9, 30), sh(18, 9, 30)]],
  ];

  it.each(cases)('sees no gap in %s', (_, code, klineType, labels) => {
    const h = harness();
    const last = labels.at(-1)!;
    const out = h.push(answer(last + 40 * 86_400_000, ...labels.map((ts) => bar(code, klineType, ts, 1))));
    expect(gaps(out)).toEqual([]);
    expect(finals(out).map((f) => f.tsMs)).toEqual(labels);
  });

  it.each(cases)('reports a bar missing in the middle of %s', (_, code, klineType, labels) => {
    const h = harness();
    const without = labels.filter((_, i) => i !== labels.length - 2);
    const out = h.push(
      answer(labels.at(-1)! + 40 * 86_400_000, ...without.map((ts) => bar(code, klineType, ts, 1))),
    );
    expect(gaps(out)).toEqual([
      {
        type: 'gap',
        code,
        klineType,
        fromMs: labels.at(-3),
        toMs: labels.at(-1),
        reason: MERGE_GAP_REASONS.missingBars,
      },
    ]);
  });
});

describe('createBarMerger: reports and series', () => {
  it('reports a change of a final bar as late and does not emit it again', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(0), b(1, 1), b(2)));
    expect(h.push(answer(at(2, 2000), b(1, 1), b(2)))).toEqual([]); // same values: silent
    expect(h.reports).toEqual([]);
    expect(h.push(answer(at(2, 3000), b(1, 7), b(2)))).toEqual([]);
    expect(h.reports).toEqual([
      expect.objectContaining({ problem: 'late', action: 'dropped', code: C, tsMs: at(1) }),
    ]);
  });

  it('does not report a stale read, sent before the one that proved the bar, as a late change', () => {
    const h = harness();
    h.push(answer(at(2, 1000), b(0), b(1, 1), b(2)));
    expect(h.push(answer(at(1, 30_000), b(1, 7)))).toEqual([]);
    expect(h.reports).toEqual([]);
  });

  it('drops and reports invalid rows', () => {
    const h = harness();
    expect(
      h.push([
        { ...b(0), close: Number.NaN },
        { ...b(1), high: 0, close: 5 },
      ]),
    ).toEqual([]);
    expect(h.reports.map((r) => r.problem)).toEqual(['bad-price', 'inconsistent-ohlc']);
    expect(h.merger.pending()).toEqual([]);
  });

  it('keeps series of different codes and kline types apart', () => {
    const h = harness();
    const rows = answer(at(1, 1000), b(1, 1, 'ETHUSDT'), b(0), bar(C, 2, T0, 5), b(0, 1, 'ETHUSDT'), b(1));
    const out = h.push(rows);
    expect(
      out.map((o) =>
        o.type === 'gap' ? 'gap' : `${o.code}/${o.klineType}@${(o.tsMs - T0) / MIN}${o.final ? 'F' : 'U'}`,
      ),
    ).toEqual(['BTCUSDT/1@0F', 'BTCUSDT/1@1U', 'BTCUSDT/2@0U', 'ETHUSDT/1@0F', 'ETHUSDT/1@1U']);
    // A newer bar of another series proves nothing.
    expect(view(h.push(answer(at(3, 1000), b(3, 1, 'ETHUSDT'))))).toEqual([
      'G:missing-bars@1-3',
      'G:unconfirmed@1-3',
    ]);
    expect(h.merger.pending().filter((p) => p.code === C && p.klineType === 1)).toHaveLength(1);
  });

  it('rejects a negative grace period', () => {
    expect(() => createBarMerger({ graceMs: -1 })).toThrow(
      expect.objectContaining({ code: 'QF_INVALID_OPTION', option: 'graceMs' }),
    );
  });
});

// Bars built from one helper default to a read 1 s after their start, which proves nothing.
describe('test-support bars', () => {
  it('stamps every bar of an answer with one read and one arrival', () => {
    const rows: Bar[] = answer({ readAtMs: 5, receivedAtMs: 9 }, b(0), b(1));
    expect(rows.map((r) => [r.readAtMs, r.receivedAtMs])).toEqual([
      [5, 9],
      [5, 9],
    ]);
  });
});

describe('createBarMerger when the service trades on a calendar holiday (issue 28 item 3)', () => {
  it("proves a stock's newest bar read on the weekend after it, not only after the next session closes", () => {
    // Good Friday 2026-04-03: no NYSE session by the calendar; the service served minute bars.
    const saturday = Date.parse('2026-04-04T12:00:00Z');
    const last = Date.parse('2026-04-03T19:59:00Z');
    const bars = [last - 60_000, last].map((ts) =>
      bar('AAPL.US', 1, ts, 100, { readAtMs: saturday, receivedAtMs: saturday + 5 }),
    );
    const out: MergeBarsOutput[] = [];
    createBarMerger().push(bars, (u) => out.push(u));
    const finals = out.filter((u): u is BarUpdate => u.type === 'bar-update' && u.final).map((u) => u.tsMs);
    expect(finals).toEqual([last - 60_000, last]); // the newest was held until Monday's close
  });
});
