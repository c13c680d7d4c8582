/**
 * Cross-package: the operators on records decoded by core from the spec-quirk fixtures, through
 * the public entry points of both packages.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { filter } from 'rxjs';
import { calendarOf } from '@quoteflow/core';
import {
  barFinalAfterMs,
  dateCalendarMisses,
  decodeDepthTickData,
  decodeKlineData,
  decodeSuspensionResponse,
  tradingDateOf,
} from '@quoteflow/core/internal';
import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';
import type { ReadStamps } from '@quoteflow/core/internal';
import {
  dedupeBySeq,
  isBarUpdate,
  mergeBars,
  normalizeBarList,
  normalizeSuspension,
  resampleBars,
  seriesKey,
  suspensionChanges,
  yesterdayCloses,
} from '@quoteflow/operators';
import type { BarInput, MergeBarsOutput, ResampledBar } from '@quoteflow/operators';

const fixture = (path: string): string =>
  readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
const klineData = (name: string) =>
  (
    JSON.parse(fixture(`kline/${name}`)) as {
      data: { code: string; kline_type: number; kline_list: Record<string, string>[] };
    }
  ).data;

/** When the fixtures' answers were read and arrived (core stamps every bar it decodes with these). */
const STAMPS: ReadStamps = {
  readAtMs: Date.UTC(2026, 10, 17, 15),
  receivedAtMs: Date.UTC(2026, 10, 17, 15, 0, 0, 80),
};

/**
 * The wire rows as a `BarInput`, untouched (seconds, strings, empty volumes): data "from elsewhere",
 * stamped like core stamps an answer.
 */
function wireRows(name: string): BarInput[] {
  const d = klineData(name);
  return d.kline_list.map((r) => ({
    ...STAMPS,
    code: d.code,
    klineType: d.kline_type,
    tsMs: r['timestamp'] as string,
    open: r['open_price'] as string,
    high: r['high_price'] as string,
    low: r['low_price'] as string,
    close: r['close_price'] as string,
    volume: r['volume'],
    turnover: r['turnover'],
  }));
}

describe('operators on core-decoded fixtures', () => {
  it.each([
    'newest-first-repeated.json',
    'empty-volume.json',
    'timestamps-in-ms.json',
    'aapl-daily.json',
    '700hk-daily.json',
  ])('normalizeBarList on raw wire rows agrees with core’s decoder (%s)', (name) => {
    const decoded = decodeKlineData(klineData(name), STAMPS).bars;
    expect(normalizeBarList(wireRows(name)).bars).toEqual(decoded);
    // Core's bars pass through unchanged: nothing to repair twice.
    expect(normalizeBarList(decoded).bars).toEqual(decoded);
  });

  it('reports the non-numeric price that core refuses, instead of a NaN', () => {
    const { bars, reports } = normalizeBarList(wireRows('non-numeric-price.json'));
    expect(bars).toHaveLength(1);
    expect(reports.filter((r) => r.action === 'dropped').map((r) => r.problem)).toEqual(['bad-price']);
    expect(() => decodeKlineData(klineData('non-numeric-price.json'), STAMPS)).toThrow(
      expect.objectContaining({ code: 'QF_DECODE' }),
    );
  });

  it('merges decoded history with later latest-two bars, closes bars on evidence only, and resamples the closed bars', () => {
    const MIN = 60_000;
    // Each answer as core decodes it: every bar stamped with when its request left and arrived.
    const at = (readAtMs: number): ReadStamps => ({ readAtMs, receivedAtMs: readAtMs + 80 });
    const wire = klineData('newest-first-repeated.json'); // BTCUSDT 1m, 3 bars, newest first and repeated
    const first = Math.min(...wire.kline_list.map((r) => Number(r['timestamp']))) * 1000;
    // History read 30 s into its newest bar.
    const history = decodeKlineData(wire, at(first + 2 * MIN + 30_000)).bars;
    const last = history.at(-1) as Bar;
    // Later `/batch-kline` answers: the last history bar with the next one, read 1 s into the next
    // (before the calendar could prove anything); the next alone, changed, read 1 ms before its
    // period end + grace (proves nothing: time passing alone never closes a bar); the same values
    // read at that instant (final by the calendar).
    const later = (b: Bar, readAtMs: number, change: Partial<Bar> = {}): Bar => ({
      ...b,
      ...change,
      ...at(readAtMs),
    });
    const next: Bar = { ...last, tsMs: last.tsMs + MIN, close: last.close + 1, high: last.close + 1 };
    const l = [later(last, next.tsMs + 1_000), later(next, next.tsMs + 1_000)];
    const m = [later(next, next.tsMs + MIN + 1_999, { close: next.close - 1 })];
    const n = [later(next, next.tsMs + MIN + 2_000, { close: next.close - 1 })];
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    ts.run(({ cold, expectObservable }) => {
      const src = cold<readonly Bar[]>('h 9ms l 9ms m 9ms n', { h: history, l, m, n });
      const merged = src.pipe(
        mergeBars({
          graceMs: 2_000,
          lastClosed: new Map([[seriesKey('BTCUSDT', 1), history[0]?.tsMs as number]]),
        }),
      );
      const u = (b: Bar, final: boolean, revision: number): BarUpdate => ({
        ...b,
        type: 'bar-update',
        final,
        revision,
      });
      // History: bar 0 is seeded as closed, bar 1 is final (a newer bar in the same answer), bar 2
      // forms. The next answer holds bar 2 with a newer bar: bar 2 is final with the values of that
      // read, and the next bar forms. Its change is an update; the read after its period end + grace
      // closes it with the same values (an unchanged repeat of a forming bar is not emitted).
      expectObservable(merged).toBe('(ab) 6ms (cd) 6ms e 9ms f', {
        a: u(history[1] as Bar, true, 0),
        b: u(last, false, 0),
        c: u(l[0]!, true, 1),
        d: u(l[1]!, false, 0),
        e: u(m[0]!, false, 1),
        f: u(n[0]!, true, 2),
      } satisfies Record<string, MergeBarsOutput>);
      const fiveMinute = src.pipe(
        mergeBars({ graceMs: 2_000 }),
        filter(isBarUpdate),
        resampleBars({ to: 2, emit: 'final' }),
      );
      // Bars 0 and 1 fall in one 5-minute period, bar 2 in the next: the first closes, partial.
      expectObservable(fiveMinute).toBe('x', {
        x: expect.objectContaining({
          final: true,
          partial: true,
          sourceCount: 2,
          expectedCount: 5,
          open: history[0]?.open,
          close: history[1]?.close,
        }) as ResampledBar,
      });
    });
  });

  it('finds yesterday’s close in decoded daily bars', () => {
    const daily = decodeKlineData(klineData('aapl-daily.json'), STAMPS).bars;
    const [y] = yesterdayCloses(daily);
    const sorted = [...daily].sort((a, b) => a.tsMs - b.tsMs);
    expect(y?.prevClose).toBe(sorted.at(-2)?.close);
    expect(y?.latestPrice).toBe(sorted.at(-1)?.close);
  });

  it('dates the provider’s 700.HK daily sample by the Hong Kong sessions its labels lie in, never a Saturday (issue 33 item 3)', () => {
    // The published sample's labels for 700.HK: 13:00 Hong Kong on Thursday 2 March 2023, then
    // 13:00 and 15:40 on Friday 3 March (the newest: 2023-03-03T07:40:00Z). Each lies inside a
    // session, so each is that session's date, and the Friday bars are final at Friday's close.
    const daily = decodeKlineData(klineData('700hk-daily.json'), STAMPS).bars;
    const hk = calendarOf('700.HK');
    expect(daily.map((b) => tradingDateOf(b.tsMs, hk))).toEqual(['2023-03-02', '2023-03-03', '2023-03-03']);
    expect(daily.map((b) => dateCalendarMisses(b.tsMs, 8, hk))).toEqual([undefined, undefined, undefined]);
    expect(new Date(barFinalAfterMs(daily.at(-1)!.tsMs, 8, hk)).toISOString()).toBe(
      '2023-03-03T08:00:00.000Z',
    );
    // Both closes yesterday-close reports come from Friday's session (the sample has two bars in
    // it): Friday 3 March, where the rule that shifted labels by 12 hours said Saturday 4 March.
    const [y] = yesterdayCloses(daily);
    expect(y).toMatchObject({ code: '700.HK', prevDate: '2023-03-03', latestDate: '2023-03-03' });
  });

  it('drops a repeated 64-bit seq decoded from depth ticks', () => {
    const ticks = decodeDepthTickData(JSON.parse(fixture('depth-tick/huge-seq.json')).data);
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('aa|', { a: ticks[0] as DepthTick }).pipe(dedupeBySeq())).toBe('a-|', {
        a: ticks[0],
      });
    });
    expect(ticks[0]?.seq).toBe(18446744073709551615n);
  });

  it('emits suspension changes between decoded snapshots, normalised across exchanges', () => {
    const sse = decodeSuspensionResponse('sse', 200, fixture('suspension/sse.json'));
    const nyse = decodeSuspensionResponse('nyse', 200, fixture('suspension/nyse.json'));
    // Core's records are already normalised: normalising again changes nothing.
    for (const r of [...sse, ...nyse]) expect(normalizeSuspension(r)).toEqual(r);
    const resumed: SuspensionRecord = {
      ...(sse[0] as SuspensionRecord),
      resumeDate: '2026-11-23',
      resumeTime: '09:30:00',
      resumeAtMs: Date.UTC(2026, 10, 23, 1, 30),
    };
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    ts.run(({ cold, expectObservable }) => {
      const snapshots = cold<readonly SuspensionRecord[]>('a 9ms b 9ms c 9ms |', {
        a: sse,
        b: [...sse, ...nyse],
        c: [resumed, ...sse.slice(1), ...nyse],
      });
      const kinds = {
        x: expect.objectContaining({ change: 'new' }),
        y: expect.objectContaining({ change: 'new' }),
        n: expect.objectContaining({ change: 'new', record: nyse[0] }),
        c: expect.objectContaining({ change: 'changed', record: resumed, previous: sse[0] }),
      };
      expectObservable(snapshots.pipe(suspensionChanges())).toBe('(xy) 6ms n 9ms c 9ms |', kinds);
    });
  });
});
