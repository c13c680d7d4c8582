import {
  calendarOf,
  type Bar,
  type BatchKlineGroup,
  type KlineType,
  type TradingCalendar,
} from '@quoteflow/core';
import { isBarClosedAt, KLINE_PERIOD_MS, mayTradeAt } from '@quoteflow/core/internal';
import { seriesKey } from '@quoteflow/operators';

const DAY_MS = 86_400_000;
/** Forming-bar updates of the slowest bars are read at least this often while their market trades. */
const SLOWEST_POLL_MS = 60_000;
/** A long bar's forming values not read for this many of its poll periods are read even at a cost. */
const STARVING_PERIODS = 30;

interface PlannedSeries {
  readonly code: string;
  readonly klineType: KlineType;
  readonly calendar: TradingCalendar;
  /** Forming updates are read this often while the market trades. */
  readonly everyMs: number;
  lastPolledMs: number;
  /** Joining the poll: asked for at every poll, whatever its market's hours, until it is answered. */
  joining: boolean;
  newestBarMs: number | undefined;
  /** A poll made once the newest bar was closed read its final values: no final read is due. */
  finalRead: boolean;
}

/** How many polls of series the calendar let {@link LivePollPlanner} skip, and how many it asked for. */
export interface LivePollCounts {
  readonly polled: number;
  readonly skippedClosed: number;
}

/**
 * Which series a live K-line poll asks for, and in what order, from each one's market calendar:
 * a series whose newest bar just became final by the calendar (its period or session closed) is read
 * first, once, so its final values reach the sink soon; otherwise a series is read while its market
 * may trade (stocks: the day's sessions, a minute early; forex and the like: Sunday 17:00 New York to
 * Saturday 00:00 UTC, the widest reading of their week; crypto: always), intraday bars at every poll,
 * bars of a day or longer no more often than every 60 s, in the room the poll's last request has
 * left (so they add no request) or, not read for 30 minutes, a 30th of them per poll. A market that
 * is closed costs no request after the read of its last bar. A series joining the poll (taken over
 * from another worker, say) is asked for at every poll until it is answered, whatever its market's
 * hours, since that answer decides whether its history must be read; it takes its place after the
 * series polled already, so that their polls keep their rhythm.
 */
export class LivePollPlanner {
  readonly #series = new Map<string, PlannedSeries>();
  #polled = 0;
  #skippedClosed = 0;

  constructor(
    series: readonly { readonly code: string; readonly klineType: KlineType }[],
    private readonly graceMs: number,
    /** The plan's groups per `/batch-kline` request (`PlanLimits.batchKlineGroups`). */
    private readonly groupsPerRequest: number,
  ) {
    for (const s of series) this.add(s);
  }

  /**
   * Takes a series into the poll, after those in it (nothing if it is in it); `joining`: asked for
   * at every poll from now, whatever its market's hours, until {@link joined}.
   */
  add(s: { readonly code: string; readonly klineType: KlineType }, joining = false): void {
    const key = seriesKey(s.code, s.klineType);
    if (this.#series.has(key)) return;
    const periodMs = KLINE_PERIOD_MS[s.klineType] ?? DAY_MS;
    this.#series.set(key, {
      code: s.code,
      klineType: s.klineType,
      calendar: calendarOf(s.code),
      everyMs: periodMs < DAY_MS ? 0 : Math.min(SLOWEST_POLL_MS, periodMs / 30),
      lastPolledMs: Number.NEGATIVE_INFINITY,
      joining,
      newestBarMs: undefined,
      finalRead: false,
    });
  }

  /** A joining series was answered: from now on its calendar decides when it is asked for. */
  joined(code: string, klineType: KlineType): void {
    const s = this.#series.get(seriesKey(code, klineType));
    if (s !== undefined) s.joining = false;
  }

  /** Drops series from the poll. */
  remove(series: readonly { readonly code: string; readonly klineType: KlineType }[]): void {
    for (const s of series) this.#series.delete(seriesKey(s.code, s.klineType));
  }

  /** How many series the poll holds. */
  get size(): number {
    return this.#series.size;
  }

  get counts(): LivePollCounts {
    return { polled: this.#polled, skippedClosed: this.#skippedClosed };
  }

  /** The groups to poll at `nowMs`, most urgent first; marks them polled. */
  select(nowMs: number): BatchKlineGroup[] {
    const urgent: PlannedSeries[] = [];
    const routine: PlannedSeries[] = [];
    const slow: PlannedSeries[] = [];
    let slowTotal = 0;
    for (const s of this.#series.values()) {
      if (s.everyMs > 0) slowTotal++;
      if (s.joining) routine.push(s);
      else if (this.#finalReadDue(s, nowMs)) urgent.push(s);
      else if (!mayTradeAt(s.calendar, nowMs)) this.#skippedClosed++;
      else if (nowMs - s.lastPolledMs >= s.everyMs) (s.everyMs > 0 ? slow : routine).push(s);
    }
    // The oldest bar's final read first.
    urgent.sort((a, b) => a.newestBarMs! - b.newestBarMs!);
    // Forming updates of long bars ride in the room the poll's last request has left, the longest
    // waiting first, so they add no request; one not read for 30 of its periods (30 min for daily
    // bars) goes anyway, a 30th of them per poll at most.
    slow.sort((a, b) => a.lastPolledMs - b.lastPolledMs);
    const fast = urgent.length + routine.length;
    const room = (this.groupsPerRequest - (fast % this.groupsPerRequest)) % this.groupsPerRequest;
    let starving = 0;
    while (
      starving < slow.length &&
      nowMs - slow[starving]!.lastPolledMs >= STARVING_PERIODS * slow[starving]!.everyMs
    )
      starving++;
    const take = Math.max(Math.min(room, slow.length), Math.min(starving, Math.ceil(slowTotal / 30)));
    const chosen = [...urgent, ...routine, ...slow.slice(0, take)];
    for (const s of chosen) s.lastPolledMs = nowMs;
    this.#polled += chosen.length;
    return chosen.map((s) => ({ code: s.code, klineType: s.klineType, count: 2 }));
  }

  /** Bars of one answer: the newest bar of each series is the one whose final read is due once it closes. */
  observe(bars: readonly Bar[]): void {
    for (const b of bars) {
      const s = this.#series.get(seriesKey(b.code, b.klineType));
      if (s === undefined || (s.newestBarMs !== undefined && b.tsMs <= s.newestBarMs)) continue;
      s.newestBarMs = b.tsMs;
      s.finalRead = false;
    }
  }

  /**
   * Whether the newest bar seen is closed at `nowMs` and was not when last polled: a read now
   * proves it final (core's `isBarClosedAt`, the question `mergeBars` answers for it), once.
   */
  #finalReadDue(s: PlannedSeries, nowMs: number): boolean {
    if (s.newestBarMs === undefined || s.finalRead) return false;
    if (!isBarClosedAt(s.newestBarMs, s.klineType, s.calendar, nowMs, this.graceMs)) return false;
    // Closed stays closed: once a poll was made after it closed, nothing is due until a newer bar.
    s.finalRead = isBarClosedAt(s.newestBarMs, s.klineType, s.calendar, s.lastPolledMs, this.graceMs);
    return !s.finalRead;
  }
}
