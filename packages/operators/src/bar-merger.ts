import { calendarOf as coreCalendarOf } from '@quoteflow/core';
import { barsMissingBetween, finalReadFromMs } from '@quoteflow/core/internal';
import type { Bar, GapMarker, KlineType, TradingCalendar } from '@quoteflow/core';
import {
  MERGE_BARS_DEFAULTS,
  MERGE_GAP_REASONS,
  type BarMerger,
  type BarMergerOptions,
  type MergeBarsInput,
  type MergeBarsOutput,
  type PendingBar,
  type SeriesReset,
} from './bar-merger-types.js';
import { invalidOption } from './internal/invalid-option.js';
import {
  compareBars,
  droppedReport,
  resolveHoles,
  sameAnswer,
  sameValues,
  toUpdate,
  type Entry,
  type Series,
} from './internal/merger-series.js';
import { normalizeBar } from './normalize-bars.js';
import type { BarReport } from './normalize-bars.js';
import { seriesKey } from './series-key.js';

/**
 * Creates the state machine behind `mergeBars`, for use without RxJS: history (`/kline`) and the
 * latest bars (`/batch-kline`) merged into one series per (code, klineType).
 *
 * A bar is emitted `final: true` only on evidence, never because time passed (see `mergeBars`).
 *
 * @example
 * ```ts
 * const merger = createBarMerger();
 * const out: MergeBarsOutput[] = [];
 * merger.push(historyBars, (u) => out.push(u));
 * merger.push(latestTwo, (u) => out.push(u));
 * for (const p of merger.pending()) if (p.unconfirmed) console.log('read again', p.code, p.tsMs);
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
    options.firstHeld,
    options.calendarOf ?? coreCalendarOf,
    options.onReport,
    options.isHalted,
  );
}

/** The merger's state; a class, because V8 optimises its field accesses better than closure variables. */
class SeriesMerger implements BarMerger {
  private readonly byCode = new Map<string, (Series | undefined)[]>();
  /** Watermarks given by resets, which replace the seeded ones. */
  private readonly resetTo = new Map<string, SeriesReset>();

  constructor(
    private readonly graceMs: number,
    private readonly seeded: ReadonlyMap<string, number> | undefined,
    private readonly seededFirst: ReadonlyMap<string, number> | undefined,
    private readonly calendarOf: (code: string) => TradingCalendar,
    private readonly onReport: ((report: BarReport) => void) | undefined,
    private readonly isHalted: BarMergerOptions['isHalted'],
  ) {}

  push(input: MergeBarsInput, emit: (out: MergeBarsOutput) => void): void {
    if (!Array.isArray(input)) {
      const type = (input as GapMarker | SeriesReset | Bar).type;
      if (type === 'gap') {
        this.pushGap(input as GapMarker, emit);
        return;
      }
      if (type === 'series-reset') {
        this.reset(input as SeriesReset);
        return;
      }
    }
    if (!Array.isArray(input)) {
      const bar = normalizeBar(input as Bar, this.onReport);
      if (bar !== undefined) this.pushRun(this.seriesOf(bar.code, bar.klineType), [bar], 0, 1, emit);
      return;
    }
    const raw = input as readonly Bar[];
    const bars: Bar[] = [];
    for (const row of raw) {
      const bar = normalizeBar(row, this.onReport);
      if (bar !== undefined) bars.push(bar);
    }
    let sorted = true;
    for (let i = 1; i < bars.length && sorted; i++)
      if (compareBars(bars[i - 1]!, bars[i]!) > 0) sorted = false;
    if (!sorted) bars.sort(compareBars); // stable: of equal starts the later input row comes last
    // One run per series.
    for (let i = 0; i < bars.length;) {
      let j = i + 1;
      const first = bars[i]!;
      while (j < bars.length && bars[j]!.code === first.code && bars[j]!.klineType === first.klineType) j++;
      this.pushRun(this.seriesOf(first.code, first.klineType), bars, i, j, emit);
      i = j;
    }
  }

  lastClosed(): Map<string, number> {
    const out = new Map<string, number>();
    for (const types of this.byCode.values()) {
      for (const s of types)
        if (s !== undefined && s.closedTs !== -Infinity) out.set(seriesKey(s.code, s.klineType), s.closedTs);
    }
    for (const [k, r] of this.resetTo)
      if (r.lastClosedMs !== undefined && !out.has(k)) out.set(k, r.lastClosedMs);
    if (this.seeded !== undefined)
      for (const [k, v] of this.seeded) if (!out.has(k) && !this.resetTo.has(k)) out.set(k, v);
    return out;
  }

  private reset(r: SeriesReset): void {
    for (const name of ['lastClosedMs', 'firstHeldMs'] as const) {
      const ms = r[name];
      if (ms !== undefined && !Number.isFinite(ms))
        invalidOption(name, `mergeBars: a reset's "${name}" must be finite, got ${ms}`);
    }
    const types = this.byCode.get(r.code);
    if (types !== undefined) types[r.klineType] = undefined;
    this.resetTo.set(seriesKey(r.code, r.klineType), r);
  }

  pending(): PendingBar[] {
    const out: PendingBar[] = [];
    for (const types of this.byCode.values()) {
      for (const s of types) {
        if (s === undefined) continue;
        s.entries.forEach((e, i) =>
          out.push({
            code: s.code,
            klineType: s.klineType,
            tsMs: e.tsMs,
            readAtMs: e.bar.readAtMs,
            unconfirmed: i < s.entries.length - 1 && !this.isProven(s, e, i),
            finalByCalendarAtMs: finalReadFromMs(e.tsMs, s.klineType, s.calendar, this.graceMs),
          }),
        );
      }
    }
    return out;
  }

  private seriesOf(code: string, klineType: KlineType): Series {
    let types = this.byCode.get(code);
    const existing = types?.[klineType];
    if (existing !== undefined) return existing;
    if (types === undefined) {
      types = [];
      this.byCode.set(code, types);
    }
    const key = seriesKey(code, klineType);
    const reset = this.resetTo.get(key);
    const seed = reset === undefined ? this.seeded?.get(key) : reset.lastClosedMs;
    const seedFirst = reset === undefined ? this.seededFirst?.get(key) : reset.firstHeldMs;
    const s: Series = {
      code,
      klineType,
      calendar: this.calendarOf(code),
      closedTs: seed ?? -Infinity,
      heldFirstTs: seedFirst,
      growsBackwards: reset?.growsBackwards === true && seedFirst === undefined,
      closedBar: undefined,
      entries: [],
      newestTs: seed,
      skipGapCheck: false,
      holes: [],
    };
    types[klineType] = s;
    return s;
  }

  /** Applies the bars `bars[from..to)` of one series (sorted by start), then emits what they prove. */
  private pushRun(
    s: Series,
    bars: readonly Bar[],
    from: number,
    to: number,
    emit: (o: MergeBarsOutput) => void,
  ): void {
    if (s.heldFirstTs !== undefined && bars[from]!.tsMs < s.heldFirstTs)
      from = this.emitOlder(s, bars, from, to, emit);
    for (let i = from; i < to; i++) {
      const bar = bars[i]!;
      const next = bars[i + 1];
      // Of two rows with the same start in one answer, the later one wins.
      if (i + 1 < to && next!.tsMs === bar.tsMs && sameAnswer(next!, bar)) continue;
      // A newer bar of the same answer later in this run proves this one before it is weighed
      // against the entry's read (the newer bar is applied after it).
      let laterInRun = false;
      for (let k = i + 1; k < to && !laterInRun; k++)
        laterInRun = bars[k]!.tsMs > bar.tsMs && sameAnswer(bars[k]!, bar);
      this.apply(s, bar, laterInRun, emit);
    }
    if (s.holes.length > 0) resolveHoles(s, bars.slice(from, to));
    this.dropVanished(s, bars, from, to);
    this.settle(s, emit);
  }

  /**
   * Emits the bars of a run (sorted) older than the oldest bar held: final by evidence, since the
   * held bar is newer and was read before them. Of two rows with one start the later one wins.
   * Returns where the run's other bars begin.
   */
  private emitOlder(
    s: Series,
    bars: readonly Bar[],
    from: number,
    to: number,
    emit: (o: MergeBarsOutput) => void,
  ): number {
    const heldFirst = s.heldFirstTs!;
    let end = from;
    while (end < to && bars[end]!.tsMs < heldFirst) end++;
    for (let i = from; i < end; i++) {
      const bar = bars[i]!;
      if (i + 1 < end && bars[i + 1]!.tsMs === bar.tsMs) continue;
      emit(toUpdate(bar, true, 0));
    }
    s.heldFirstTs = bars[from]!.tsMs;
    return end;
  }

  /**
   * Drops an unconfirmed bar that an answer covering its start no longer holds (the service
   * dropped or re-labelled it): it cannot be proven, and waiting for it would hold its series.
   */
  private dropVanished(s: Series, bars: readonly Bar[], from: number, to: number): void {
    const entries = s.entries;
    if (entries.length < 2 || to - from < 2) return; // needs an unproven bar with one newer, and an answer around it
    for (let k = 0; k < entries.length - 1; k++) {
      const e = entries[k]!;
      if (e.laterInAnswer) continue;
      let below: Bar | undefined;
      for (let i = from; i < to; i++) {
        const b = bars[i]!;
        if (b.tsMs < e.tsMs) below = b;
        else if (b.tsMs === e.tsMs) break;
        else {
          if (below !== undefined && sameAnswer(below, b)) {
            entries.splice(k--, 1);
            this.onReport?.(
              droppedReport(
                'vanished',
                e.bar,
                'a later answer holds the bars around it but not this one; dropped unproven',
              ),
            );
          }
          break;
        }
      }
    }
  }

  /** Records one read of a bar (none when the bar is already closed). */
  private apply(s: Series, bar: Bar, laterInRun: boolean, emit: (o: MergeBarsOutput) => void): void {
    const ts = bar.tsMs;
    if (ts <= s.closedTs) {
      // Only a read newer than the one that proved the bar can be a revision; an older concurrent
      // read that differs is merely stale.
      const closed = s.closedBar;
      if (ts === closed?.tsMs && bar.readAtMs > closed.readAtMs && !sameValues(closed, bar))
        this.onReport?.(droppedReport('late', bar, 'changed after its final values were written'));
      return;
    }
    const entries = s.entries;
    let i = entries.length;
    while (i > 0 && entries[i - 1]!.tsMs > ts) i--;
    // Evidence within one answer, whatever way its bars were pushed (one by one or as a batch):
    // a newer bar of the same answer proves this one, and this one proves older bars of it.
    let laterInAnswer = laterInRun;
    for (let k = i; k < entries.length && !laterInAnswer; k++)
      laterInAnswer = sameAnswer(entries[k]!.bar, bar);
    const existing = entries[i - 1];
    if (existing !== undefined && existing.tsMs === ts) {
      if (bar.receivedAtMs < existing.firstSeenAtMs) existing.firstSeenAtMs = bar.receivedAtMs;
      // Proven values beat unproven ones (a later read of a final bar that differs would be a
      // provider revision: the first proof stands); otherwise the newer read wins.
      const provenNow = laterInAnswer || this.readProves(s, existing, i - 1, bar);
      const newer = bar.readAtMs >= existing.bar.readAtMs;
      if (
        provenNow ? newer || !this.isProven(s, existing, i - 1) : newer && !this.isProven(s, existing, i - 1)
      ) {
        existing.bar = bar;
        existing.laterInAnswer = laterInAnswer;
      }
      i--;
    } else {
      if (s.newestTs === undefined || ts > s.newestTs) this.noteNewest(s, ts, emit);
      entries.splice(i, 0, {
        tsMs: ts,
        bar,
        laterInAnswer,
        firstSeenAtMs: bar.receivedAtMs,
        emitted: undefined,
        revision: 0,
        askedAgain: false,
        finalByCalendarAtMs: Number.NaN,
      });
    }
    for (let k = i - 1; k >= 0; k--) {
      const older = entries[k]!;
      if (!sameAnswer(older.bar, bar)) continue;
      if (older.laterInAnswer) break; // older ones of this answer were marked when it was
      older.laterInAnswer = true;
    }
  }

  /**
   * A label newer than any seen: bars the calendar expects between the newest one and it (under
   * every labelling, unless a halt explains them) are a hole, reported as `missing-bars`.
   */
  private noteNewest(s: Series, ts: number, emit: (o: MergeBarsOutput) => void): void {
    if (
      !s.skipGapCheck &&
      s.newestTs !== undefined &&
      barsMissingBetween(s.newestTs, ts, s.klineType, s.calendar) &&
      this.isHalted?.(s.code, s.klineType, s.newestTs, ts) !== true
    ) {
      s.holes.push({ afterMs: s.newestTs, beforeMs: ts });
      emit({
        type: 'gap',
        code: s.code,
        klineType: s.klineType,
        fromMs: s.newestTs,
        toMs: ts,
        reason: MERGE_GAP_REASONS.missingBars,
      });
    }
    s.skipGapCheck = false;
    s.newestTs = ts;
  }

  /** Whether a read of `bar` (for the entry at `index`) would prove it final. */
  private readProves(s: Series, entry: Entry, index: number, bar: Bar): boolean {
    const laterSeen = this.laterSeenAt(s, index);
    return laterSeen < bar.readAtMs || bar.readAtMs >= this.finalByCalendarAt(s, entry);
  }

  /** Earliest arrival of an answer that showed a bar newer than the entry at `index`. */
  private laterSeenAt(s: Series, index: number): number {
    let min = Infinity;
    for (let k = index + 1; k < s.entries.length; k++) {
      const t = s.entries[k]!.firstSeenAtMs;
      if (t < min) min = t;
    }
    return min;
  }

  private finalByCalendarAt(s: Series, entry: Entry): number {
    // Calendar arithmetic is the costly part of a proof: once per bar.
    if (Number.isNaN(entry.finalByCalendarAtMs))
      entry.finalByCalendarAtMs = finalReadFromMs(entry.tsMs, s.klineType, s.calendar, this.graceMs);
    return entry.finalByCalendarAtMs;
  }

  /**
   * The two kinds of evidence: a newer bar of the series seen in the same answer as these values or
   * before they were read (an answer that arrived before this read left), or a read made after the
   * calendar closed the bar's session plus the grace.
   */
  private isProven(s: Series, entry: Entry, index: number): boolean {
    return entry.laterInAnswer || this.readProves(s, entry, index, entry.bar);
  }

  /**
   * Emits proven bars in order, asks once for a re-read of a closed but unproven one, then updates
   * the forming bar, but only when no older bar is owed: a newer bar's forming values ahead of an
   * older final would put the series out of time order downstream (one Kafka key, say). So while
   * a bar waits for its re-read or a hole is open, forming updates wait, and once it settles the
   * finals come in order, then the newest forming values (bars closed meanwhile only as finals).
   */
  private settle(s: Series, emit: (o: MergeBarsOutput) => void): void {
    const entries = s.entries;
    // Nothing newer than the start of a hole closes: a bar inside it would bar the missing ones.
    const blockedAfter = s.holes[0]?.afterMs ?? Infinity;
    while (entries.length > 0 && entries[0]!.tsMs <= blockedAfter && this.isProven(s, entries[0]!, 0)) {
      const e = entries.shift()!;
      // A series that grows backwards: its first closed bar is the oldest held, and older history
      // pushed later (the pages of a backfill, newest first) is final below it.
      if (s.growsBackwards && s.heldFirstTs === undefined) s.heldFirstTs = e.tsMs;
      s.closedTs = e.tsMs;
      s.closedBar = e.bar;
      emit(toUpdate(e.bar, true, e.revision));
    }
    const head = entries[0];
    if (head === undefined) return;
    if (entries.length > 1) {
      if (!head.askedAgain && !this.isProven(s, head, 0)) {
        head.askedAgain = true;
        emit({
          type: 'gap',
          code: s.code,
          klineType: s.klineType,
          fromMs: head.tsMs,
          toMs: entries[1]!.tsMs,
          reason: MERGE_GAP_REASONS.unconfirmed,
        });
      }
      return;
    }
    if (head.tsMs > blockedAfter) return; // bars of the hole before it are owed
    if (head.emitted !== undefined && sameValues(head.emitted, head.bar)) return;
    head.emitted = head.bar;
    emit(toUpdate(head.bar, false, head.revision++));
  }

  private pushGap(marker: GapMarker, emit: (o: MergeBarsOutput) => void): void {
    // A restart or skip upstream: the next bar of the series opens without a second gap report;
    // closed bars stay closed (no duplicates) and pending bars keep their reads. A marker that says
    // history could not reach back before `toMs` releases the holes and unproven bars before it.
    const targets =
      marker.klineType !== undefined
        ? [this.seriesOf(marker.code, marker.klineType)]
        : (this.byCode.get(marker.code) ?? []).filter((s): s is Series => s !== undefined);
    for (const s of targets) {
      s.skipGapCheck = true;
      const reachedMs = marker.toMs;
      if (reachedMs === undefined) continue;
      for (let h = s.holes.length - 1; h >= 0; h--) {
        const hole = s.holes[h]!;
        if (hole.beforeMs <= reachedMs) s.holes.splice(h, 1);
        else if (hole.afterMs < reachedMs) hole.afterMs = reachedMs; // the part before cannot be read
      }
      while (s.entries.length > 1 && s.entries[0]!.tsMs < reachedMs && !this.isProven(s, s.entries[0]!, 0)) {
        const e = s.entries.shift()!;
        this.onReport?.(
          droppedReport(
            'vanished',
            e.bar,
            `its final values cannot be read again (${marker.reason}); dropped unproven`,
          ),
        );
      }
    }
    emit(marker);
    for (const s of targets) this.settle(s, emit);
  }
}
