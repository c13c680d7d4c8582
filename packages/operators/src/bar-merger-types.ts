import type { Bar, BarUpdate, GapMarker, KlineType, TradingCalendar } from '@quoteflow/core';
import type { BarReport } from './normalize-bars.js';

/**
 * Input that makes a merger forget one series, e.g. when another worker takes it over or hands it
 * back: its bars not yet final are dropped unemitted, its holes forgotten, and it starts again as
 * if `lastClosedMs` had been given in {@link BarMergerOptions.lastClosed} (nothing at or before it
 * is emitted again; bars the calendar expects between it and the first bar seen are reported).
 */
export interface SeriesReset {
  readonly type: 'series-reset';
  readonly code: string;
  readonly klineType: KlineType;
  /** The newest closed bar start already written, if any. */
  readonly lastClosedMs?: number;
  /** The oldest closed bar start already written, if any (see {@link BarMergerOptions.firstHeld}). */
  readonly firstHeldMs?: number;
  /**
   * Without `firstHeldMs`: the first bar the series closes after the reset becomes its oldest held
   * one, so that older history pushed later (a long backfill's pages, read newest first and
   * delivered as they arrive) is emitted final below it, oldest first within each push, instead of
   * dropped. Bars then are in order per push, not across pushes.
   */
  readonly growsBackwards?: boolean;
}

/** What a merger takes: one bar, a batch of bars (any order, any series), a gap marker, or a reset. */
export type MergeBarsInput = Bar | readonly Bar[] | GapMarker | SeriesReset;
/** What a merger emits: bar updates, and gap markers (gaps and re-reads it asks for, forwarded input markers). */
export type MergeBarsOutput = BarUpdate | GapMarker;

/** Reasons of the gap markers a merger emits itself. */
export const MERGE_GAP_REASONS = {
  /** Bars the calendar expects under every labelling are missing between two bars seen. */
  missingBars: 'missing-bars',
  /**
   * A newer bar appeared, but this bar's final values were never read: read it again (history
   * from `fromMs`); newer closed bars wait behind it so that bars stay final and in order.
   */
  unconfirmed: 'unconfirmed',
} as const;

/** Options of {@link createBarMerger} (and of `mergeBars`). */
export interface BarMergerOptions {
  /**
   * How long after the calendar says a bar's session (its day, week or month) has closed a read of
   * it counts as final (core's `finalReadFromMs`): covers a difference between our clock and
   * the service's, and the service's own delay in settling a bar.
   * @defaultValue 15_000 ms
   */
  readonly graceMs?: number;
  /**
   * The newest closed bar start per series (`seriesKey(code, klineType)` → epoch ms), e.g. from a
   * dataset written before a restart. Bars at or before it are never emitted again, and bars the
   * calendar expects between it and the first bar seen are reported, so a restart neither
   * duplicates nor loses bars.
   */
  readonly lastClosed?: ReadonlyMap<string, number>;
  /**
   * The oldest closed bar start held per series (`seriesKey` → epoch ms), with `lastClosed`: a
   * dataset that holds fewer bars than wanted grows backwards through the same merger. A bar older
   * than it, read later, is final by evidence (the held bar is newer and was read before it): it is
   * emitted `final: true` once, oldest first, before the bars of its push that are newer than
   * `lastClosed`. So finals of a series come in order within each direction; older history is the
   * only thing emitted below a series' newest final. Without it, bars at or before `lastClosed`
   * are never emitted.
   */
  readonly firstHeld?: ReadonlyMap<string, number>;
  /** The trading calendar of a code. @defaultValue core's `calendarOf` */
  readonly calendarOf?: (code: string) => TradingCalendar;
  /** Receives invalid input rows (dropped) and late changes of an already closed bar. */
  readonly onReport?: (report: BarReport) => void;
  /**
   * Whether a halt of the product explains the bars missing between two bars seen (the service's
   * suspension records; see `haltExplainsGap`): then no gap is reported and nothing is re-read.
   * @defaultValue no halts
   */
  readonly isHalted?: (code: string, klineType: KlineType, afterMs: number, beforeMs: number) => boolean;
}

/** Defaults of {@link BarMergerOptions}. */
export const MERGE_BARS_DEFAULTS = { graceMs: 15_000 } as const;

/** A bar that is not final yet: the forming one, or one waiting for proof. */
export interface PendingBar {
  readonly code: string;
  readonly klineType: KlineType;
  readonly tsMs: number;
  /** When its newest values were read. */
  readonly readAtMs: number;
  /** Whether it needs another read: a newer bar was seen, so it closed, but nothing proves its values. */
  readonly unconfirmed: boolean;
  /** A read at or after this instant proves the values final by the calendar. */
  readonly finalByCalendarAtMs: number;
}

/** The plain state machine behind `mergeBars`; no timers and no clock: finality comes from the reads. */
export interface BarMerger {
  /** Feeds one input (a batch is one or more answers of the service); outputs go to `emit`, in order. */
  push(input: MergeBarsInput, emit: (out: MergeBarsOutput) => void): void;
  /** The newest closed bar start per series, keyed by `seriesKey`: what to persist for a restart. */
  lastClosed(): Map<string, number>;
  /** Every bar not final yet, oldest first per series: what a poller must read again, and when. */
  pending(): PendingBar[];
}
