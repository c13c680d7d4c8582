import type { Bar, BarUpdate, KlineType, TradingCalendar } from '@quoteflow/core';
import type { BarReport } from '../normalize-bars.js';

/** One bar of a series that is not final yet. */
export interface Entry {
  readonly tsMs: number;
  /** The values to write: the newest read, or the read that proved them final. */
  bar: Bar;
  /** Whether `bar` came in an answer that also held a newer bar of the series. */
  laterInAnswer: boolean;
  /** Earliest arrival of an answer that held this bar. */
  firstSeenAtMs: number;
  /** The values last emitted as `final: false`, to skip an update that changes nothing. */
  emitted: Bar | undefined;
  revision: number;
  /** Whether a re-read was asked for (once per entry). */
  askedAgain: boolean;
  /** A read at or after this proves it by the calendar (plus grace); NaN until first needed. */
  finalByCalendarAtMs: number;
}

export interface Series {
  readonly code: string;
  readonly klineType: KlineType;
  readonly calendar: TradingCalendar;
  /** Newest closed bar start, -Infinity if none. */
  closedTs: number;
  /**
   * Oldest closed bar start held downstream, when known: older bars read later are final (that
   * bar, read before them, proves them) and emitted once, oldest first. Undefined: older bars are
   * dropped like any bar at or before `closedTs`.
   */
  heldFirstTs: number | undefined;
  /** Its first closed bar becomes `heldFirstTs` (a reset's `growsBackwards`). */
  readonly growsBackwards: boolean;
  closedBar: Bar | undefined;
  /** Bars newer than `closedTs`, oldest first. */
  readonly entries: Entry[];
  /** Newest label seen (closed or not), for the gap check; undefined before the first. */
  newestTs: number | undefined;
  skipGapCheck: boolean;
  /**
   * Ranges where the calendar expects bars that no answer held, oldest first: closed bars newer
   * than a hole's start wait until an answer covers it (bars on both sides in one answer) or an
   * input gap marker says it cannot be read.
   */
  readonly holes: Hole[];
}

export interface Hole {
  /** The bar before the hole (moves up when history says the part before it cannot be read). */
  afterMs: number;
  /** The bar after the hole. */
  readonly beforeMs: number;
}

export function sameValues(a: Bar, b: Bar): boolean {
  return (
    a.close === b.close &&
    a.volume === b.volume &&
    a.high === b.high &&
    a.low === b.low &&
    a.open === b.open &&
    a.turnover === b.turnover
  );
}

export function toUpdate(bar: Bar, final: boolean, revision: number): BarUpdate {
  return {
    type: 'bar-update',
    code: bar.code,
    klineType: bar.klineType,
    tsMs: bar.tsMs,
    open: bar.open,
    high: bar.high,
    low: bar.low,
    close: bar.close,
    volume: bar.volume,
    turnover: bar.turnover,
    readAtMs: bar.readAtMs,
    receivedAtMs: bar.receivedAtMs,
    final,
    revision,
  };
}

export function compareBars(a: Bar, b: Bar): number {
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  if (a.klineType !== b.klineType) return a.klineType - b.klineType;
  return a.tsMs - b.tsMs;
}

export function sameAnswer(a: Bar, b: Bar): boolean {
  return a.readAtMs === b.readAtMs && a.receivedAtMs === b.receivedAtMs;
}

/** A report that a bar was dropped, for `onReport`. */
export function droppedReport(problem: 'late' | 'vanished', bar: Bar, why: string): BarReport {
  return {
    type: 'bar-report',
    problem,
    action: 'dropped',
    code: bar.code,
    klineType: bar.klineType,
    tsMs: bar.tsMs,
    message: `bar ${bar.code} type ${bar.klineType} at ${new Date(bar.tsMs).toISOString()}: ${why}`,
    row: bar,
  };
}

/**
 * Removes the holes of `s` that one answer of `run` (the latest push's bars of the series, sorted by
 * start) covers: it held bars on both sides, so it holds every bar between them that exists (the
 * ones it lacks do not, e.g. a holiday). `klineHistory` stamps all pages of one call as one answer,
 * so a hole longer than one page is covered too.
 */
export function resolveHoles(s: Series, run: readonly Bar[]): void {
  for (let h = 0; h < s.holes.length; h++) if (coveredByOneAnswer(s.holes[h]!, run)) s.holes.splice(h--, 1);
}

function coveredByOneAnswer(hole: Hole, run: readonly Bar[]): boolean {
  for (let i = 0; i < run.length && run[i]!.tsMs <= hole.afterMs; i++) {
    for (let k = run.length - 1; k > i && run[k]!.tsMs >= hole.beforeMs; k--)
      if (sameAnswer(run[i]!, run[k]!)) return true;
  }
  return false;
}
