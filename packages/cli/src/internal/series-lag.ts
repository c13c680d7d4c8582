import { calendarOf, type KlineType, type TradingCalendar } from '@quoteflow/core';
import { KLINE_PERIOD_MS, mayTradeAt } from '@quoteflow/core/internal';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** A bar's period for the lag (monthly bars: the longest month). */
const PERIOD_MS: Readonly<Record<number, number>> = { 8: DAY_MS, 9: 7 * DAY_MS, 10: 31 * DAY_MS };

/** Trading time of one calendar, summed from the first time asked: the minutes it may trade. */
class TradingTime {
  #atMs: number;
  #totalMs = 0;

  constructor(
    private readonly calendar: TradingCalendar,
    startMs: number,
  ) {
    this.#atMs = startMs;
  }

  /** Trading time up to `nowMs` since the start (a minute counts when the market may trade at its start). */
  at(nowMs: number): number {
    while (this.#atMs < nowMs) {
      const next = Math.min(nowMs, (Math.floor(this.#atMs / MINUTE_MS) + 1) * MINUTE_MS);
      if (mayTradeAt(this.calendar, this.#atMs)) this.#totalMs += next - this.#atMs;
      this.#atMs = next;
    }
    return this.#totalMs;
  }
}

/**
 * How far each series is behind its market (`quoteflow_lag_seconds`): the time its market may
 * have traded since the newest final bar's values were read, beyond one bar period. A sync that
 * keeps up reads each bar within its refresh period after the bar closed, so it stays near 0; unlike
 * freshness it stands still while the market cannot trade (nights, weekends, holidays, lunch
 * breaks, by core's `mayTradeAt`), so one bound alerts on every market at any hour. Trading time is
 * summed per calendar, minute by minute, from where the last reading left it: a reading costs the
 * minutes since the previous one, per calendar, not per series.
 */
export class SeriesLag {
  readonly #calendars = new Map<string, TradingTime>();
  readonly #series = new Map<
    string,
    { code: string; klineType: KlineType; time: TradingTime; tradingAtReadMs: number; periodMs: number }
  >();

  /** A final bar of the series whose values were read at `readAtMs` (an older reading changes nothing). */
  onFinal(code: string, klineType: KlineType, readAtMs: number): void {
    const key = `${code}\u0000${klineType}`;
    const held = this.#series.get(key);
    const time = held?.time ?? this.#timeOf(calendarOf(code), readAtMs);
    const tradingAtReadMs = Math.max(held?.tradingAtReadMs ?? 0, time.at(readAtMs));
    const periodMs = KLINE_PERIOD_MS[klineType] ?? PERIOD_MS[klineType] ?? DAY_MS;
    this.#series.set(key, { code, klineType, time, tradingAtReadMs, periodMs });
  }

  /** Every series' lag at `nowMs`, in seconds (0 when on time). */
  lags(nowMs: number): { code: string; klineType: KlineType; seconds: number }[] {
    return [...this.#series.values()].map((s) => ({
      code: s.code,
      klineType: s.klineType,
      seconds: Math.max(0, s.time.at(nowMs) - s.tradingAtReadMs - s.periodMs) / 1000,
    }));
  }

  #timeOf(calendar: TradingCalendar, startMs: number): TradingTime {
    let time = this.#calendars.get(calendar.id);
    if (time === undefined) this.#calendars.set(calendar.id, (time = new TradingTime(calendar, startMs)));
    return time;
  }
}
