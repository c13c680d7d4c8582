/**
 * Cross-package: the operators on records decoded by core from the spec-quirk fixtures, through
 * the public entry points of both packages.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { filter } from 'rxjs';
import { decodeDepthTickData, decodeKlineData, decodeSuspensionResponse } from '@quoteflow/core';
import type { Bar, BarUpdate, DepthTick, SuspensionRecord } from '@quoteflow/core';
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

/** The wire rows as a `BarInput`, untouched (seconds, strings, empty volumes): data "from elsewhere". */
function wireRows(name: string): BarInput[] {
  const d = klineData(name);
  return d.kline_list.map((r) => ({
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
  it.each(['newest-first-repeated.json', 'empty-volume.json', 'timestamps-in-ms.json', 'aapl-daily.json'])(
    'normalizeBarList on raw wire rows agrees with core’s decoder (%s)',
    (name) => {
      const decoded = decodeKlineData(klineData(name)).bars;
      expect(normalizeBarList(wireRows(name)).bars).toEqual(decoded);
      // Core's bars pass through unchanged: nothing to repair twice.
      expect(normalizeBarList(decoded).bars).toEqual(decoded);
    },
  );

  it('reports the non-numeric price that core refuses, instead of a NaN', () => {
    const { bars, reports } = normalizeBarList(wireRows('non-numeric-price.json'));
    expect(bars).toHaveLength(1);
    expect(reports.filter((r) => r.action === 'dropped').map((r) => r.problem)).toEqual(['bad-price']);
    expect(() => decodeKlineData(klineData('non-numeric-price.json'))).toThrow(
      expect.objectContaining({ code: 'QF_DECODE' }),
    );
  });

  it('merges decoded history with later latest-two bars, closes by time, and resamples the closed bars', () => {
    const history = decodeKlineData(klineData('newest-first-repeated.json')).bars; // BTCUSDT 1m, 3 bars
    const last = history.at(-1) as Bar;
    const MIN = 60_000;
    const next: Bar = { ...last, tsMs: last.tsMs + MIN, close: last.close + 1, high: last.close + 1 };
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    // Virtual 0 = 30 s into the last history bar; 2 s grace.
    const scheduler = {
      now: () => ts.now() + last.tsMs + 30_000,
      schedule: ts.schedule.bind(ts),
    } as unknown as TestScheduler;
    ts.run(({ cold, expectObservable }) => {
      const src = cold<readonly Bar[]>('h 39999ms l', { h: history, l: [last, next] });
      const merged = src.pipe(
        mergeBars({
          graceMs: 2_000,
          scheduler,
          lastClosed: new Map([[seriesKey('BTCUSDT', 1), history[0]?.tsMs as number]]),
        }),
      );
      const u = (b: Bar, final: boolean, revision: number): BarUpdate => ({
        ...b,
        type: 'bar-update',
        final,
        revision,
      });
      // History: bar 0 is seeded as closed, bar 1 closes (newer exists), bar 2 forms. The fixture's
      // stamps are 20 s past the minute, so bar 2's period ends 40 s after its stamp: it closes
      // at virtual 12 s (end + 2 s grace); at 40 s the next bar forms and closes at 72 s.
      expectObservable(merged).toBe('(ab) 11996ms c 27999ms d 31999ms e', {
        a: u(history[1] as Bar, true, 0),
        b: u(last, false, 0),
        c: u(last, true, 1),
        d: u(next, false, 0),
        e: u(next, true, 1),
      } satisfies Record<string, MergeBarsOutput>);
      const fiveMinute = src.pipe(
        mergeBars({ graceMs: 2_000, scheduler }),
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
    const daily = decodeKlineData(klineData('aapl-daily.json')).bars;
    const [y] = yesterdayCloses(daily);
    const sorted = [...daily].sort((a, b) => a.tsMs - b.tsMs);
    expect(y?.prevClose).toBe(sorted.at(-2)?.close);
    expect(y?.latestPrice).toBe(sorted.at(-1)?.close);
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
