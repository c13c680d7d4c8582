import { KLINE_PERIOD_MS, calendarOf as coreCalendarOf } from '@quoteflow/core';
import type { Bar, BarUpdate, GapMarker, KlineType, TradingCalendar } from '@quoteflow/core';
import { invalidOption } from './internal/invalid-option.js';
import { nextBarStart, periodAt } from './internal/next-bar-start.js';
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
  /** Whether the forming bar may equal the emitted one again (it changed twice since). */
  needsCompare: boolean;
  /** The push that last listed this series for settling. */
  epoch: number;
  skipGapCheck: boolean;
  gaps: OpenGap[];
}

/** The plain state machine behind `mergeBars`; no timers: call {@link BarMerger.expire}. */
export interface BarMerger {
  /**
   * Feeds one input; outputs go to `emit`, in order. `now` is the clock time, or a clock that is
   * read only when a new bar start appears (to close at once a bar whose period end + grace has
   * already passed); closing by time otherwise happens in {@link BarMerger.expire}.
   */
  push(input: MergeBarsInput, now: number | (() => number), emit: (out: MergeBarsOutput) => void): void;
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
  return new SeriesMerger(
    graceMs,
    options.lastClosed,
    options.calendarOf ?? coreCalendarOf,
    options.onReport,
  );
}

/** The merger's state; a class, because V8 optimises its field accesses better than closure variables. */
class SeriesMerger implements BarMerger {
  private readonly byCode = new Map<string, (Series | undefined)[]>();
  private readonly forming = new Set<Series>();
  private minDeadline = Infinity;
  private epoch = 0;

  constructor(
    private readonly graceMs: number,
    private readonly seeded: ReadonlyMap<string, number> | undefined,
    private readonly calendarOf: (code: string) => TradingCalendar,
    private readonly onReport: ((report: BarReport) => void) | undefined,
  ) {}

  push(input: MergeBarsInput, now: number | (() => number), emit: (out: MergeBarsOutput) => void): void {
    if (Array.isArray(input)) {
      const bars = input as readonly Bar[];
      let sorted = true;
      for (let i = 1; i < bars.length && sorted; i++)
        if (compareBars(bars[i - 1] as Bar, bars[i] as Bar) >= 0) sorted = false;
      const ordered = sorted ? bars : [...bars].sort(compareBars);
      const touched: Series[] = [];
      const batch = ++this.epoch;
      for (let i = 0; i < ordered.length; i++) {
        const bar = ordered[i] as Bar;
        const next = ordered[i + 1];
        // Of rows with the same start in one batch the last one wins (the sort is stable).
        if (
          !sorted &&
          next !== undefined &&
          next.tsMs === bar.tsMs &&
          next.code === bar.code &&
          next.klineType === bar.klineType
        )
          continue;
        const s = this.pushBar(bar, emit);
        if (s !== undefined && s.dirty && s.epoch !== batch) {
          s.epoch = batch;
          touched.push(s);
        }
      }
      // Each touched series emits its forming bar once per batch, however many rows touched it.
      for (const s of touched) now = this.settle(s, now, emit);
    } else if ((input as GapMarker).type === 'gap') {
      this.pushGap(input as GapMarker, emit);
    } else {
      const s = this.pushBar(input as Bar, emit);
      if (s !== undefined) this.settle(s, now, emit);
    }
  }

  expire(nowMs: number, emit: (out: MergeBarsOutput) => void): void {
    let next = Infinity;
    for (const s of this.forming) {
      if (nowMs >= s.formingDeadline) this.closeForming(s, emit);
      else if (s.formingDeadline < next) next = s.formingDeadline;
    }
    this.minDeadline = next;
  }

  nextDeadlineMs(): number {
    return this.minDeadline;
  }

  lastClosed(): Map<string, number> {
    const out = new Map<string, number>();
    for (const types of this.byCode.values()) {
      for (const s of types)
        if (s !== undefined && s.closedTs !== -Infinity) out.set(seriesKey(s.code, s.klineType), s.closedTs);
    }
    if (this.seeded !== undefined) for (const [k, v] of this.seeded) if (!out.has(k)) out.set(k, v);
    return out;
  }

  private seriesOf(code: string, klineType: KlineType): Series {
    const s = this.byCode.get(code)?.[klineType];
    return s ?? this.newSeries(code, klineType);
  }

  private newSeries(code: string, klineType: KlineType): Series {
    let types = this.byCode.get(code);
    if (types === undefined) {
      types = [];
      this.byCode.set(code, types);
    }
    const seed = this.seeded?.get(seriesKey(code, klineType));
    const s: Series = {
      code,
      klineType,
      calendar: this.calendarOf(code),
      closedTs: seed ?? -Infinity,
      closedBar: undefined,
      closedStart: undefined,
      forming: undefined,
      emitted: undefined,
      formingStart: 0,
      formingDeadline: Infinity,
      revision: 0,
      dirty: false,
      needsCompare: false,
      epoch: 0,
      skipGapCheck: false,
      gaps: [],
    };
    types[klineType] = s;
    return s;
  }

  private closeForming(s: Series, emit: (o: MergeBarsOutput) => void): void {
    const bar = s.forming as Bar;
    const revision = s.revision;
    s.closedTs = bar.tsMs;
    s.closedBar = bar;
    s.closedStart = s.formingStart;
    s.forming = undefined;
    s.emitted = undefined;
    s.dirty = false;
    s.revision = 0;
    this.forming.delete(s);
    emit(toUpdate(bar, true, revision));
  }

  private openForming(s: Series, bar: Bar, emit: (o: MergeBarsOutput) => void): void {
    const period = periodAt(bar.tsMs, s.klineType, s.calendar);
    const start = period?.startMs ?? bar.tsMs;
    const end = period?.endMs ?? bar.tsMs + (KLINE_PERIOD_MS[s.klineType] ?? 86_400_000);
    if (!s.skipGapCheck && s.closedTs !== -Infinity) {
      const prevStart = s.closedStart ?? periodAt(s.closedTs, s.klineType, s.calendar)?.startMs ?? s.closedTs;
      const expected = nextBarStart(prevStart, s.klineType, s.calendar);
      if (start > expected) {
        if (s.gaps.length >= MAX_OPEN_GAPS) s.gaps.shift();
        s.gaps.push({ fromMs: expected, toMs: start });
        emit({
          type: 'gap',
          code: s.code,
          klineType: s.klineType,
          fromMs: expected,
          toMs: start,
          reason: 'missing-bars',
        });
      }
    }
    s.skipGapCheck = false;
    s.forming = bar;
    s.emitted = undefined;
    s.formingStart = start;
    s.formingDeadline = end + this.graceMs;
    s.revision = 0;
    this.forming.add(s);
    if (s.formingDeadline < this.minDeadline) this.minDeadline = s.formingDeadline;
    s.dirty = true;
  }

  private fillGap(s: Series, ts: number): boolean {
    const gaps = s.gaps;
    for (let i = 0; i < gaps.length; i++) {
      const g = gaps[i] as OpenGap;
      if (ts >= g.fromMs && ts < g.toMs) {
        g.fromMs = ts + 1; // gaps fill in ascending order, each bar start once
        if (g.fromMs >= g.toMs) gaps.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  /** Applies one bar; returns its series when the forming bar may need emitting. */
  private pushBar(raw: Bar, emit: (o: MergeBarsOutput) => void): Series | undefined {
    const bar = normalizeBar(raw, this.onReport);
    if (bar === undefined) return undefined;
    const s = this.seriesOf(bar.code, bar.klineType);
    const ts = bar.tsMs;
    const f = s.forming;
    if (f !== undefined) {
      if (ts === f.tsMs) {
        if (!sameValues(f, bar)) {
          // Unless the bar changed again since it was emitted, it now differs from the emitted one.
          s.needsCompare = s.dirty || f !== s.emitted;
          s.forming = bar;
          s.dirty = true;
        }
        return s;
      }
      if (ts > f.tsMs) {
        this.closeForming(s, emit);
        this.openForming(s, bar, emit);
        return s;
      }
    } else if (ts > s.closedTs) {
      this.openForming(s, bar, emit);
      return s;
    }
    // Older than the forming bar: a closed bar. Emitted only if newer than every closed bar, or
    // if it fills a gap this merger reported (a backfill), and then exactly once.
    if (ts > s.closedTs) {
      this.fillGap(s, ts);
      s.closedTs = ts;
      s.closedBar = bar;
      s.closedStart = undefined;
      emit(toUpdate(bar, true, 0));
      return undefined;
    }
    if (s.gaps.length > 0 && this.fillGap(s, ts)) {
      emit(toUpdate(bar, true, 0));
      return undefined;
    }
    const onReport = this.onReport;
    if (
      onReport !== undefined &&
      ts === s.closedTs &&
      s.closedBar !== undefined &&
      !sameValues(s.closedBar, bar)
    ) {
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
    return undefined;
  }

  /** Emits the forming bar of `s` if it changed since last emitted; a new one past its deadline closes at once. */
  private settle(
    s: Series,
    now: number | (() => number),
    emit: (o: MergeBarsOutput) => void,
  ): number | (() => number) {
    if (!s.dirty) return now;
    s.dirty = false;
    const bar = s.forming as Bar;
    if (s.emitted === undefined) {
      const nowMs = typeof now === 'number' ? now : now();
      if (nowMs >= s.formingDeadline) {
        this.closeForming(s, emit);
        return nowMs;
      }
      now = nowMs;
    } else if (s.needsCompare && sameValues(s.emitted, bar)) {
      return now;
    }
    s.emitted = bar;
    emit(toUpdate(bar, false, s.revision++));
    return now;
  }

  private pushGap(marker: GapMarker, emit: (o: MergeBarsOutput) => void): void {
    // A restart or skip upstream: the next bar of the series opens it without a second gap
    // report; closed bars stay closed (no duplicates) and the forming bar keeps its revisions.
    if (marker.klineType !== undefined) this.seriesOf(marker.code, marker.klineType).skipGapCheck = true;
    else for (const s of this.byCode.get(marker.code) ?? []) if (s !== undefined) s.skipGapCheck = true;
    emit(marker);
  }
}
