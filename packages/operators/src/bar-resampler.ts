import { calendarOf as coreCalendarOf, isKlineType, InvalidOptionError } from '@quoteflow/core';
import { KLINE_PERIOD_MS } from '@quoteflow/core/internal';
import type { Bar, BarUpdate, KlineType, TradingCalendar } from '@quoteflow/core';
import { invalidOption } from './internal/invalid-option.js';
import { countBarStarts, periodAt } from './internal/next-bar-start.js';
import type { BarKind } from './internal/next-bar-start.js';
import type { BarReport } from './normalize-bars.js';

/** The period to resample to: a K-line type, or any N-minute period. */
export type ResampleTarget = KlineType | { readonly periodMs: number } | { readonly minutes: number };

/** What a resampler takes: closed bars, or a merged stream's updates (`final: false` ones count as open). */
export type ResampleInput = Bar | BarUpdate;

/** One period of a resampled series. */
export interface ResampledBar {
  readonly type: 'resampled-bar';
  readonly code: string;
  /** The K-line type of the source bars. */
  readonly sourceKlineType: KlineType;
  /** The target K-line type, or `undefined` for an N-minute target. */
  readonly klineType: KlineType | undefined;
  /** The target's intraday length in ms, `undefined` for daily, weekly and monthly targets. */
  readonly periodMs: number | undefined;
  /** Period start and end (core's `barPeriodAt`), epoch ms UTC. */
  readonly tsMs: number;
  readonly endMs: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** Sum of the sources' volumes; a `null` source volume counts as 0; `null` if all are null. */
  readonly volume: number | null;
  /** Sum of the sources' turnovers, like `volume`. */
  readonly turnover: number | null;
  /** Distinct source bars (by start) aggregated so far. */
  readonly sourceCount: number;
  /** Source bar periods the period holds under the calendar (holidays not modelled). */
  readonly expectedCount: number;
  /** `true` unless every expected source bar was seen closed and the period is closed. */
  readonly partial: boolean;
  /** `true` exactly once per period, when it is closed. */
  readonly final: boolean;
  /** 0 for the first emission of a period, +1 for each later one. */
  readonly revision: number;
}

/** Options of {@link createBarResampler} (and of `resampleBars`). */
export interface BarResamplerOptions {
  /** The target period: a K-line type (`6` = 2 hours), `{ minutes: 90 }` or `{ periodMs }`. */
  readonly to: ResampleTarget;
  /** The trading calendar of a code. @defaultValue core's `calendarOf` */
  readonly calendarOf?: (code: string) => TradingCalendar;
  /**
   * `all`: emit the aggregate after every source bar that changes it (`final: false`) and the
   * closed period once (`final: true`); `final`: only closed periods.
   * @defaultValue 'all'
   */
  readonly emit?: 'all' | 'final';
  /** Receives dropped sources: `late` (older than the open period) and `outside-session`. */
  readonly onReport?: (report: BarReport) => void;
}

/** Defaults of {@link BarResamplerOptions}. */
export const RESAMPLE_BARS_DEFAULTS = { emit: 'all' } as const;

/** The plain state machine behind `resampleBars`. */
export interface BarResampler {
  /** Feeds one source bar; outputs go to `emit`. Throws `QF_INVALID_OPTION` if the source cannot nest in the target. */
  push(bar: ResampleInput, emit: (out: ResampledBar) => void): void;
  /** Emits every open period as it stands (`final: false`, `partial: true`), e.g. at the end of a batch. */
  flush(emit: (out: ResampledBar) => void): void;
}

/** Whether a source bar is closed: a plain `Bar`, or an update marked final. */
function isFinal(bar: ResampleInput): boolean {
  return bar.type === 'bar' || bar.final;
}

interface Series {
  readonly code: string;
  readonly source: KlineType;
  readonly calendar: TradingCalendar;
  /** The period length when it is fixed and epoch-aligned (24-hour market, intraday target), else 0. */
  readonly fixedPeriodMs: number;
  startMs: number;
  endMs: number;
  expected: number;
  /** Sources before this instant belong to closed periods. */
  closedUpTo: number;
  open: boolean;
  /** The period's source bars, one per start, ascending. */
  entries: ResampleInput[];
  finals: number;
  revision: number;
  // Aggregate of entries[0 .. n-2]; the last entry is added on the fly (it may still change).
  pHigh: number;
  pLow: number;
  pVol: number;
  pVolN: number;
  pTurn: number;
  pTurnN: number;
}

const MINUTE_MS = 60_000;
const RANK: Record<8 | 9 | 10, number> = { 8: 1, 9: 2, 10: 3 };

function targetKind(to: ResampleTarget): BarKind {
  if (typeof to === 'number') {
    if (!isKlineType(to))
      invalidOption(
        'to',
        `resampleBars: "to" must be a K-line type 1-10, { minutes } or { periodMs }, got ${String(to)}`,
      );
    return to;
  }
  const periodMs = 'minutes' in to ? to.minutes * MINUTE_MS : to.periodMs;
  if (!Number.isInteger(periodMs) || periodMs <= 0 || periodMs % MINUTE_MS !== 0 || periodMs > 86_400_000) {
    invalidOption(
      'to',
      `resampleBars: "to" must be a whole number of minutes up to one day, got ${JSON.stringify(to)}`,
    );
  }
  return { periodMs };
}

/**
 * Why bars of `source` cannot be resampled to `to`, or `undefined` when they can; a `to` that is no
 * target at all throws `QF_INVALID_OPTION`. For checking a configuration before any bar flows.
 */
export function resampleProblem(source: KlineType, to: ResampleTarget): string | undefined {
  return nestingProblem(source, targetKind(to));
}

/** Why `source` cannot be resampled to `target`, or `undefined` when it can. */
function nestingProblem(source: KlineType, target: BarKind): string | undefined {
  const sp = KLINE_PERIOD_MS[source];
  const tp = typeof target === 'number' ? KLINE_PERIOD_MS[target] : target.periodMs;
  if (sp !== undefined && tp !== undefined)
    return tp % sp === 0
      ? undefined
      : `a ${tp / MINUTE_MS}-minute period is not a multiple of source type ${source} (${sp / MINUTE_MS} minutes)`;
  if (sp !== undefined) return undefined; // intraday into daily, weekly, monthly
  if (tp !== undefined) return `source type ${source} is longer than the target`;
  const s = RANK[source as 8 | 9 | 10];
  const t = RANK[target as 8 | 9 | 10];
  if (s > t) return `source type ${source} is longer than target type ${String(target)}`;
  if (source === 9 && target === 10) return 'weeks do not nest in months';
  return undefined;
}

/**
 * Creates the state machine behind `resampleBars`, for use without RxJS.
 *
 * @example
 * ```ts
 * const r = createBarResampler({ to: 6 }); // 2-hour bars, which the service lacks for stocks
 * const out: ResampledBar[] = [];
 * for (const bar of oneMinuteBars) r.push(bar, (b) => out.push(b));
 * ```
 */
export function createBarResampler(options: BarResamplerOptions): BarResampler {
  const target = targetKind(options?.to);
  const mode = options.emit ?? RESAMPLE_BARS_DEFAULTS.emit;
  if (mode !== 'all' && mode !== 'final') {
    invalidOption('emit', `resampleBars: "emit" must be "all" or "final", got ${String(mode)}`);
  }
  return new PeriodResampler(target, mode === 'all', options.calendarOf ?? coreCalendarOf, options.onReport);
}

/** The resampler's state; a class, because V8 optimises its field accesses better than closure variables. */
class PeriodResampler implements BarResampler {
  private readonly byCode = new Map<string, (Series | undefined)[]>();
  private readonly checked: boolean[] = [];
  private readonly targetType: KlineType | undefined;
  private readonly targetPeriodMs: number | undefined;

  constructor(
    private readonly target: BarKind,
    private readonly emitAll: boolean,
    private readonly calendarOf: (code: string) => TradingCalendar,
    private readonly onReport: ((report: BarReport) => void) | undefined,
  ) {
    this.targetType = typeof target === 'number' ? target : undefined;
    this.targetPeriodMs = typeof target === 'number' ? KLINE_PERIOD_MS[target] : target.periodMs;
  }

  push(bar: ResampleInput, emit: (out: ResampledBar) => void): void {
    const s = this.byCode.get(bar.code)?.[bar.klineType] ?? this.newSeries(bar.code, bar.klineType);
    const ts = bar.tsMs;
    const final = isFinal(bar);
    if (s.open && ts >= s.endMs) this.close(s, emit);
    if (!s.open) {
      if (ts < s.closedUpTo) return this.drop(bar, 'late', 'its resampled period is already closed');
      const fixed = s.fixedPeriodMs;
      if (fixed !== 0) {
        // 24-hour market, intraday target: epoch-aligned periods of one length and source count.
        s.startMs = Math.floor(ts / fixed) * fixed;
        s.endMs = s.startMs + fixed;
      } else {
        const p = periodAt(ts, this.target, s.calendar);
        if (p === undefined) return this.drop(bar, 'outside-session', 'outside the trading session');
        s.startMs = p.startMs;
        s.endMs = p.endMs;
        s.expected = countBarStarts(p.startMs, p.endMs, s.source, s.calendar);
      }
      s.open = true;
      s.revision = 0;
    } else if (ts < s.startMs) {
      return this.drop(bar, 'late', 'older than the open resampled period');
    }
    const entries = s.entries;
    const last = entries[entries.length - 1];
    let newestFinal = final;
    if (last === undefined || ts > last.tsMs) {
      if (last !== undefined) fold(s, last);
      entries.push(bar);
      if (final) s.finals++;
    } else if (ts === last.tsMs) {
      if (isFinal(last)) return; // a repeat of a closed source bar changes nothing
      entries[entries.length - 1] = bar;
      if (final) s.finals++;
    } else {
      if (!insertSlow(s, bar, final)) return;
      newestFinal = isFinal(entries[entries.length - 1] as ResampleInput);
    }
    if (newestFinal && s.finals >= s.expected) this.close(s, emit);
    else if (this.emitAll) emit(this.build(s, false));
  }

  flush(emit: (out: ResampledBar) => void): void {
    for (const types of this.byCode.values()) {
      for (const s of types) if (s?.open === true && s.entries.length > 0) emit(this.build(s, false));
    }
  }

  private newSeries(code: string, source: KlineType): Series {
    if (this.checked[source] !== true) {
      const problem = nestingProblem(source, this.target);
      if (problem !== undefined) {
        throw new InvalidOptionError(
          'to',
          `resampleBars: cannot resample ${code} type ${source}: ${problem}`,
        );
      }
      this.checked[source] = true;
    }
    let types = this.byCode.get(code);
    if (types === undefined) {
      types = [];
      this.byCode.set(code, types);
    }
    const calendar = this.calendarOf(code);
    const sourcePeriodMs = KLINE_PERIOD_MS[source];
    const fixed =
      calendar.segments.length === 0 && this.targetPeriodMs !== undefined && sourcePeriodMs !== undefined
        ? this.targetPeriodMs
        : 0;
    const s: Series = {
      code,
      source,
      calendar,
      fixedPeriodMs: fixed,
      startMs: 0,
      endMs: 0,
      expected: fixed === 0 ? 0 : fixed / (sourcePeriodMs as number),
      closedUpTo: -Infinity,
      open: false,
      entries: [],
      finals: 0,
      revision: 0,
      pHigh: -Infinity,
      pLow: Infinity,
      pVol: 0,
      pVolN: 0,
      pTurn: 0,
      pTurnN: 0,
    };
    types[source] = s;
    return s;
  }

  private build(s: Series, final: boolean): ResampledBar {
    const entries = s.entries;
    const last = entries[entries.length - 1] as ResampleInput;
    const first = entries[0] as ResampleInput;
    const volN = s.pVolN + (last.volume === null ? 0 : 1);
    const turnN = s.pTurnN + (last.turnover === null ? 0 : 1);
    return {
      type: 'resampled-bar',
      code: s.code,
      sourceKlineType: s.source,
      klineType: this.targetType,
      periodMs: this.targetPeriodMs,
      tsMs: s.startMs,
      endMs: s.endMs,
      open: first.open,
      high: last.high > s.pHigh ? last.high : s.pHigh,
      low: last.low < s.pLow ? last.low : s.pLow,
      close: last.close,
      volume: volN === 0 ? null : s.pVol + (last.volume ?? 0),
      turnover: turnN === 0 ? null : s.pTurn + (last.turnover ?? 0),
      sourceCount: entries.length,
      expectedCount: s.expected,
      partial: !final || s.finals < s.expected,
      final,
      revision: s.revision++,
    };
  }

  private close(s: Series, emit: (o: ResampledBar) => void): void {
    emit(this.build(s, true));
    s.open = false;
    s.closedUpTo = s.endMs;
    s.entries.length = 0;
    s.finals = 0;
    resetPrefix(s);
  }

  private drop(bar: ResampleInput, problem: 'late' | 'outside-session', why: string): void {
    this.onReport?.({
      type: 'bar-report',
      problem,
      action: 'dropped',
      code: bar.code,
      klineType: bar.klineType,
      tsMs: bar.tsMs,
      message: `bar ${bar.code} type ${bar.klineType} at ${bar.tsMs}: ${why}`,
      row: bar,
    });
  }
}

/** Adds a source bar to the aggregate of all but the newest source. */
function fold(s: Series, bar: ResampleInput): void {
  if (bar.high > s.pHigh) s.pHigh = bar.high;
  if (bar.low < s.pLow) s.pLow = bar.low;
  if (bar.volume !== null) {
    s.pVol += bar.volume;
    s.pVolN++;
  }
  if (bar.turnover !== null) {
    s.pTurn += bar.turnover;
    s.pTurnN++;
  }
}

function resetPrefix(s: Series): void {
  s.pHigh = -Infinity;
  s.pLow = Infinity;
  s.pVol = 0;
  s.pVolN = 0;
  s.pTurn = 0;
  s.pTurnN = 0;
}

/** Inserts an out-of-order source and rebuilds the aggregate; `false` if it changes nothing. */
function insertSlow(s: Series, bar: ResampleInput, final: boolean): boolean {
  const entries = s.entries;
  const ts = bar.tsMs;
  let i = entries.length - 1;
  while (i >= 0 && (entries[i] as ResampleInput).tsMs > ts) i--;
  const at = entries[i];
  if (at !== undefined && at.tsMs === ts) {
    if (isFinal(at)) return false; // the first closed version of a source bar wins
    entries[i] = bar;
  } else {
    entries.splice(i + 1, 0, bar);
  }
  if (final) s.finals++;
  resetPrefix(s);
  for (let j = 0; j < entries.length - 1; j++) fold(s, entries[j] as ResampleInput);
  return true;
}
