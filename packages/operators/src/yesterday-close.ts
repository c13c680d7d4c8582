import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { calendarOf as coreCalendarOf } from '@quoteflow/core';
import { tradingDateOf } from '@quoteflow/core/internal';
import type { Bar, TradingCalendar } from '@quoteflow/core';

/** The previous close of one product and the latest price's change against it. */
export interface YesterdayClose {
  readonly type: 'yesterday-close';
  readonly code: string;
  /** Label of the daily bar that holds yesterday's close; `undefined` if only one day was given. */
  readonly prevTsMs: number | undefined;
  /**
   * The exchange's own trading date of that bar (`YYYY-MM-DD`), right under every labelling of
   * daily bars (midnight UTC, exchange-local midnight, the open, any instant of the session):
   * core's `tradingDateOf`, the date the label names, also where the calendar calls it a holiday
   * (the service's bar says the exchange traded).
   */
  readonly prevDate: string | undefined;
  /** Yesterday's close: the close of the daily bar with the smaller timestamp (spec, `/kline`). */
  readonly prevClose: number | undefined;
  /** The latest price: the override passed in, else the close of the newest daily bar. */
  readonly latestPrice: number;
  /** Label of the newest daily bar. */
  readonly latestTsMs: number;
  /** The exchange's trading date of the newest daily bar (`YYYY-MM-DD`). */
  readonly latestDate: string;
  /** `latestPrice - prevClose`; `undefined` without a previous close. */
  readonly change: number | undefined;
  /** `change / prevClose * 100`; `undefined` without a previous close or when it is 0. */
  readonly changePercent: number | undefined;
}

/**
 * Yesterday's close per code from daily bars (`kline_type` 8, as `/kline` or `/batch-kline` return
 * them with `query_kline_num` 2): of the two newest distinct bar starts, the smaller one's close
 * (spec: "the one with the smaller timestamp is yesterday's close"). Rows are sorted and repeated
 * starts collapsed first (provider-facts.md: newest-first and repeated bars). Bars of other
 * K-line types, and non-finite closes, are ignored. Returns one record per code, in order of
 * first appearance; a code with a single daily bar gets `prevClose: undefined`.
 *
 * @param bars - daily bars of one or many codes.
 * @param latestPrices - optional latest price per code (e.g. from depth) instead of the newest close.
 * @param calendarOf - the trading calendar of a code, for the dates. @defaultValue core's `calendarOf`
 * @example
 * ```ts
 * const [aapl] = yesterdayCloses(dailyBars);
 * console.log(aapl?.prevClose, aapl?.changePercent?.toFixed(2));
 * ```
 */
export function yesterdayCloses(
  bars: readonly Bar[],
  latestPrices?: ReadonlyMap<string, number>,
  calendarOf: (code: string) => TradingCalendar = coreCalendarOf,
): YesterdayClose[] {
  // Per code: the newest and second-newest distinct daily bar.
  const newest = new Map<string, [Bar, Bar | undefined]>();
  for (const bar of bars) {
    if (bar.klineType !== 8 || !Number.isFinite(bar.close) || !Number.isFinite(bar.tsMs)) continue;
    const pair = newest.get(bar.code);
    if (pair === undefined) newest.set(bar.code, [bar, undefined]);
    else if (bar.tsMs > pair[0].tsMs) newest.set(bar.code, [bar, pair[0]]);
    else if (bar.tsMs === pair[0].tsMs) pair[0] = bar;
    else if (pair[1] === undefined || bar.tsMs >= pair[1].tsMs) pair[1] = bar;
  }
  const out: YesterdayClose[] = [];
  for (const [code, [latest, prev]] of newest) {
    const override = latestPrices?.get(code);
    const latestPrice = override !== undefined && Number.isFinite(override) ? override : latest.close;
    const prevClose = prev?.close;
    const change = prevClose === undefined ? undefined : latestPrice - prevClose;
    const calendar = calendarOf(code);
    out.push({
      type: 'yesterday-close',
      code,
      prevTsMs: prev?.tsMs,
      prevDate: prev === undefined ? undefined : tradingDateOf(prev.tsMs, calendar),
      prevClose,
      latestPrice,
      latestTsMs: latest.tsMs,
      latestDate: tradingDateOf(latest.tsMs, calendar),
      change,
      changePercent:
        change === undefined || prevClose === 0 || prevClose === undefined
          ? undefined
          : (change / prevClose) * 100,
    });
  }
  return out;
}

/**
 * Operator form of {@link yesterdayCloses}: each input batch of daily bars (one response) emits
 * one {@link YesterdayClose} per code in it. Stateless; forwards error and completion.
 *
 * @example
 * ```ts
 * dailyBatches$.pipe(yesterdayClose()).subscribe((y) => console.log(y.code, y.prevClose, y.changePercent));
 * ```
 */
export function yesterdayClose(): OperatorFunction<readonly Bar[], YesterdayClose> {
  return (source) =>
    new Observable<YesterdayClose>((subscriber) =>
      source.subscribe({
        next: (bars) => {
          for (const record of yesterdayCloses(bars)) subscriber.next(record);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}
