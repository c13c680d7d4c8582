import { KLINE_PERIOD_MS, barPeriodAt, calendarOf as coreCalendarOf } from '@quoteflow/core';
import type { Bar, BarUpdate, GapMarker, KlineType, TradingCalendar } from '@quoteflow/core';
import { invalidOption } from './internal/invalid-option.js';
import { nextBarStart } from './internal/next-bar-start.js';
import { normalizeBar } from './normalize-bars.js';
import type { BarReport } from './normalize-bars.js';
import { seriesKey } from './series-key.js';

/** What a merger takes: one bar, a batch of bars (any order, any series), or a gap marker. */
export type MergeBarsInput = Bar | readonly Bar[] | GapMarker;
/** What a merger emits: bar updates, and gap markers (reported gaps and forwarded input markers). */
export type MergeBarsOutput = BarUpdate | GapMarker;

/** Options of {@link createBarMerger} (and of `mergeBars`). */
export interface BarMergerOptions {
  /**
   * How long after its period's end (core's `barPeriodAt(...).endMs`) a forming bar is closed if
   * no newer bar has appeared. Should exceed the `/batch-kline` polling interval, so the last
   * update of a bar arrives before it is closed.
   * @defaultValue 15_000 ms
   */
  readonly graceMs?: number;
  /**
   * The newest closed bar start per series (`seriesKey(code, klineType)` → epoch ms), e.g. from a
   * state file written before a restart. Bars at or before it are never emitted again, and a gap
   * between it and the first bar seen is reported, so a restart neither duplicates nor loses bars.
   */
  readonly lastClosed?: ReadonlyMap<string, number>;
  /** The trading calendar of a code. @defaultValue core's `calendarOf` */
  readonly calendarOf?: (code: string) => TradingCalendar;
  /** Receives invalid input rows (dropped) and late corrections of an already closed bar. */
  readonly onReport?: (report: BarReport) => void;
}

/** Defaults of {@link BarMergerOptions}. */
export const MERGE_BARS_DEFAULTS = { graceMs: 15_000 } as const;

/** Reported gaps kept per series for accepting backfilled bars. */
const MAX_OPEN_GAPS = 8;

interface OpenGap {
  fromMs: number;
  readonly toMs: number;
}

interface Series {
  readonly code: string;
  readonly klineType: KlineType;
  readonly calendar: TradingCalendar;
  /** Newest closed bar start, -Infinity if none. */
  closedTs: number;
  closedBar: Bar | undefined;
  /** Period start of the newest closed bar, if known (gap checks). */
  closedStart: number | undefined;
  forming: Bar | undefined;
  /** The forming bar as last emitted, to skip an update that changes nothing. */
  emitted: Bar | undefined;
  formingStart: number;
  formingDeadline: number;
  /** Next revision number of the forming bar. */
  revision: number;
  dirty: boolean;
  skipGapCheck: boolean;
  gaps: OpenGap[];
}

/** The plain state machine behind `mergeBars`; no timers: call {@link BarMerger.expire}. */
export interface BarMerger {
  /** Feeds one input at clock time `nowMs`; outputs go to `emit`, in order. */
  push(input: MergeBarsInput, nowMs: number, emit: (out: MergeBarsOutput) => void): void;
  /** Closes every forming bar whose period end + grace is at or before `nowMs`. */
  expire(nowMs: number, emit: (out: MergeBarsOutput) => void): void;
  /** The earliest instant at which {@link BarMerger.expire} has work (may be early), or Infinity. */
  nextDeadlineMs(): number;
  /** The newest closed bar start per series, keyed by `seriesKey`: what to persist for a restart. */
  lastClosed(): Map<string, number>;
}

function sameValues(a: Bar, b: Bar): boolean {
  return (
    a.close === b.close &&
    a.volume === b.volume &&
    a.high === b.high &&
    a.low === b.low &&
    a.open === b.open &&
    a.turnover === b.turnover
  );
}

function toUpdate(bar: Bar, final: boolean, revision: number): BarUpdate {
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
    final,
    revision,
  };
}

function compareBars(a: Bar, b: Bar): number {
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  if (a.klineType !== b.klineType) return a.klineType - b.klineType;
  return a.tsMs - b.tsMs;
}

/**
 * Creates the state machine behind `mergeBars`, for use without RxJS: history from `/kline` and
 * the latest two bars from `/batch-kline` merged into one series per (code, klineType).
 *
 * @example
 * ```ts
 * const merger = createBarMerger({ graceMs: 5_000 });
 * const out: MergeBarsOutput[] = [];
 * merger.push(historyBars, Date.now(), (u) => out.push(u));
 * merger.push(latestTwo, Date.now(), (u) => out.push(u));
 * merger.expire(Date.now(), (u) => out.push(u)); // call periodically
 * ```
 */
export function createBarMerger(options: BarMergerOptions = {}): BarMerger {
  const graceMs = options.graceMs ?? MERGE_BARS_DEFAULTS.graceMs;
  if (typeof graceMs !== 'number' || !(graceMs >= 0)) {
    invalidOption('graceMs', `mergeBars: "graceMs" must be a number >= 0, got ${String(graceMs)}`);
  }
  const seeded = options.lastClosed;
  const calendarOf = options.calendarOf ?? coreCalendarOf;
  const onReport = options.onReport;
  const byCode = new Map<string, (Series | undefined)[]>();
  const forming = new Set<Series>();
  const touched: Series[] = [];
  let minDeadline = Infinity;

  const seriesOf = (code: string, klineType: KlineType): Series => {
    let types = byCode.get(code);
    if (types === undefined) {
      types = [];
      byCode.set(code, types);
    }
    let s = types[klineType];
    if (s === undefined) {
      const seed = seeded?.get(seriesKey(code, klineType));
      s = {
        code,
        klineType,
        calendar: calendarOf(code),
        closedTs: seed ?? -Infinity,
        closedBar: undefined,
        closedStart: undefined,
        forming: undefined,
        emitted: undefined,
        formingStart: 0,
        formingDeadline: Infinity,
        revision: 0,
        dirty: false,
        skipGapCheck: false,
        gaps: [],
      };
      types[klineType] = s;
    }
    return s;
  };

  const closeForming = (s: Series, emit: (o: MergeBarsOutput) => void): void => {
    const bar = s.forming as Bar;
    const revision = s.revision;
    s.closedTs = bar.tsMs;
    s.closedBar = bar;
    s.closedStart = s.formingStart;
    s.forming = undefined;
    s.emitted = undefined;
    s.dirty = false;
    s.revision = 0;
    forming.delete(s);
    emit(toUpdate(bar, true, revision));
  };

  const openForming = (s: Series, bar: Bar, emit: (o: MergeBarsOutput) => void): void => {
    const period = barPeriodAt(bar.tsMs, s.klineType, s.calendar);
    const start = period?.startMs ?? bar.tsMs;
    const end = period?.endMs ?? bar.tsMs + (KLINE_PERIOD_MS[s.klineType] ?? 86_400_000);
    if (!s.skipGapCheck && s.closedTs !== -Infinity) {
      const prevStart = s.closedStart ?? barPeriodAt(s.closedTs, s.klineType, s.calendar)?.startMs ?? s.closedTs;
      const expected = nextBarStart(prevStart, s.klineType, s.calendar);
      if (start > expected) {
        if (s.gaps.length >= MAX_OPEN_GAPS) s.gaps.shift();
        s.gaps.push({ fromMs: expected, toMs: start });
        emit({ type: 'gap', code: s.code, klineType: s.klineType, fromMs: expected, toMs: start, reason: 'missing-bars' });
      }
    }
    s.skipGapCheck = false;
    s.forming = bar;
    s.emitted = undefined;
    s.formingStart = start;
    s.formingDeadline = end + graceMs;
    s.revision = 0;
    forming.add(s);
    if (s.formingDeadline < minDeadline) minDeadline = s.formingDeadline;
    markDirty(s);
  };

  const markDirty = (s: Series): void => {
    if (!s.dirty) {
      s.dirty = true;
      touched.push(s);
    }
  };

  const fillGap = (s: Series, ts: number): boolean => {
    for (let i = 0; i < s.gaps.length; i++) {
      const g = s.gaps[i] as OpenGap;
      if (ts >= g.fromMs && ts < g.toMs) {
        g.fromMs = ts + 1; // gaps fill in ascending order, each bar start once
        if (g.fromMs >= g.toMs) s.gaps.splice(i, 1);
        return true;
      }
    }
    return false;
  };

  const pushBar = (raw: Bar, emit: (o: MergeBarsOutput) => void): void => {
    const bar = normalizeBar(raw, onReport);
    if (bar === undefined) return;
    const s = seriesOf(bar.code, bar.klineType);
    const ts = bar.tsMs;
    const f = s.forming;
    if (f !== undefined) {
      if (ts === f.tsMs) {
        if (!sameValues(f, bar)) {
          s.forming = bar;
          markDirty(s);
        }
        return;
      }
      if (ts > f.tsMs) {
        closeForming(s, emit);
        openForming(s, bar, emit);
        return;
      }
    } else if (ts > s.closedTs) {
      openForming(s, bar, emit);
      return;
    }
    // Older than the forming bar: a closed bar. Emitted only if newer than every closed bar, or
    // if it fills a gap this merger reported (a backfill), and then exactly once.
    if (ts > s.closedTs) {
      fillGap(s, ts);
      s.closedTs = ts;
      s.closedBar = bar;
      s.closedStart = undefined;
      emit(toUpdate(bar, true, 0));
      return;
    }
    if (fillGap(s, ts)) {
      emit(toUpdate(bar, true, 0));
      return;
    }
    if (ts === s.closedTs && s.closedBar !== undefined && !sameValues(s.closedBar, bar) && onReport !== undefined) {
      onReport({
        type: 'bar-report',
        problem: 'late',
        action: 'dropped',
        code: bar.code,
        klineType: bar.klineType,
        tsMs: ts,
        message: `bar ${bar.code} type ${bar.klineType} at ${ts}: changed after it was closed; consider a larger graceMs`,
        row: raw,
      });
    }
  };

  const settle = (nowMs: number, emit: (o: MergeBarsOutput) => void): void => {
    // Each touched series emits its forming bar once per push, however many rows touched it.
    for (let i = 0; i < touched.length; i++) {
      const s = touched[i] as Series;
      if (!s.dirty) continue;
      const bar = s.forming as Bar;
      if (s.emitted !== undefined && sameValues(s.emitted, bar)) s.dirty = false;
      else if (nowMs >= s.formingDeadline) closeForming(s, emit);
      else {
        s.dirty = false;
        s.emitted = bar;
        emit(toUpdate(bar, false, s.revision++));
      }
    }
    touched.length = 0;
  };

  const pushGap = (marker: GapMarker, emit: (o: MergeBarsOutput) => void): void => {
    // A restart or skip upstream: the next bar of the series opens it without a second gap
    // report; closed bars stay closed (no duplicates) and the forming bar keeps its revisions.
    if (marker.klineType !== undefined) seriesOf(marker.code, marker.klineType).skipGapCheck = true;
    else for (const s of byCode.get(marker.code) ?? []) if (s !== undefined) s.skipGapCheck = true;
    emit(marker);
  };

  return {
    push(input, nowMs, emit) {
      if (Array.isArray(input)) {
        const bars = input as readonly Bar[];
        let sorted = true;
        for (let i = 1; i < bars.length && sorted; i++) if (compareBars(bars[i - 1] as Bar, bars[i] as Bar) >= 0) sorted = false;
        const ordered = sorted ? bars : [...bars].sort(compareBars);
        for (let i = 0; i < ordered.length; i++) {
          const bar = ordered[i] as Bar;
          const next = ordered[i + 1];
          // Of rows with the same start in one batch the last one wins (the sort is stable).
          if (!sorted && next !== undefined && next.tsMs === bar.tsMs && next.code === bar.code && next.klineType === bar.klineType) continue;
          pushBar(bar, emit);
        }
      } else if ((input as GapMarker).type === 'gap') {
        pushGap(input as GapMarker, emit);
      } else {
        pushBar(input as Bar, emit);
      }
      settle(nowMs, emit);
    },
    expire(nowMs, emit) {
      let next = Infinity;
      for (const s of forming) {
        if (nowMs >= s.formingDeadline) closeForming(s, emit);
        else if (s.formingDeadline < next) next = s.formingDeadline;
      }
      minDeadline = next;
    },
    nextDeadlineMs: () => minDeadline,
    lastClosed() {
      const out = new Map<string, number>();
      for (const types of byCode.values()) {
        for (const s of types) if (s !== undefined && s.closedTs !== -Infinity) out.set(seriesKey(s.code, s.klineType), s.closedTs);
      }
      if (seeded !== undefined) for (const [k, v] of seeded) if (!out.has(k)) out.set(k, v);
      return out;
    },
  };
}
