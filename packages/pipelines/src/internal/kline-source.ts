import {
  type BarUpdate,
  type Clock,
  type GapMarker,
  type HistoryMarker,
  type QuoteflowClient,
  seriesKey,
} from '@quoteflow/core';
import { runLimited } from '@quoteflow/core/internal';
import {
  MERGE_GAP_REASONS,
  mergeBars,
  type BarMergerOptions,
  type MergeBarsInput,
  type MergeBarsOutput,
} from '@quoteflow/operators';
import { Subject, type Subscription } from 'rxjs';
import { CalendarDisagreements } from '../calendar-disagreements.js';
import type { KlineSyncEvent } from '../kline-sync-options.js';
import { gapEvent } from './gap-event.js';
import { HistoryBrackets } from './history-brackets.js';
import { holesLeft } from './holes-left.js';
import { isPagerGap, KlineHistoryReads, type FirstRead } from './kline-history-reads.js';
import type { KlineSeriesState } from './kline-series-state.js';
import { LiveSeriesPoll, type JoinAnswer } from './live-series-poll.js';
import { findRefusedCodes, isCodeRefusal, type RefusedCode } from './refused-codes.js';
import type { ResumePoint } from './resume-points.js';
import { settleNewestBars } from './settle-delay.js';

/** What a {@link KlineSource} takes. */
export interface KlineSourceOptions {
  readonly client: QuoteflowClient;
  readonly bars: number;
  readonly live: boolean;
  readonly graceMs: number;
  readonly settleWaitMs: number;
  readonly backfillConcurrency: number;
  readonly closeAwarePolling: boolean;
  /** The poll period: a number, or recomputed for the series of each (re)start of the live poll. */
  readonly refreshPeriodMs: (codes: readonly string[]) => number;
  /** Whether the caller fixed the period (then polls keep it instead of the plan's pace). */
  readonly fixedPeriod: boolean;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** Where a series resumes (its sinks' watermarks), asked when the series joins the run. */
  readonly resume: (code: string, klineType: BarUpdate['klineType']) => ResumePoint;
  readonly isHalted?: BarMergerOptions['isHalted'];
  readonly emitEvent: (e: KlineSyncEvent) => void;
  /**
   * Every update the merger proves or sees forming, the gap markers it reports, and the history
   * markers around each series' backfill.
   */
  readonly emit: (out: BarUpdate | GapMarker | HistoryMarker) => void;
  readonly fail: (err: unknown) => void;
}

/**
 * The reading half of a K-line run, composed of core's two sources and the one merger: each
 * series' history through the pager (`klineHistory`), then the live poll (`pollLatestBatches`),
 * every answer in arrival order into `mergeBars`, which alone decides what is final (older history
 * included); the re-reads it asks for go back through the pager. Series join and leave while it
 * runs (a cluster's takeovers). Each series' backfill is bracketed by history markers: `begin`,
 * then `complete` once its bars are out (a live run: after its first read; backfill only: at the
 * run's end, after the window's oldest bar), or `cut-short` when it leaves the run before that.
 */
export class KlineSource {
  readonly series = new Map<string, KlineSeriesState>();
  readonly reads: KlineHistoryReads;
  liveCycles = 0;
  readonly #input = new Subject<MergeBarsInput>();
  readonly #output: Subscription;
  readonly #live: LiveSeriesPoll;
  /** Calendar days the service's bars contradict, each said once. */
  readonly #disagreements = new CalendarDisagreements();
  /** A search for refused codes is under way. */
  #finding = false;
  readonly #histories: HistoryBrackets;

  constructor(private readonly o: KlineSourceOptions) {
    this.#histories = new HistoryBrackets(o.emit);
    this.reads = new KlineHistoryReads({
      client: o.client,
      bars: o.bars,
      graceMs: o.graceMs,
      signal: o.signal,
      push: (input) => this.#push(input),
      isCurrent: (s) => this.series.get(seriesKey(s.code, s.klineType)) === s,
      emitEvent: o.emitEvent,
      fail: (err) => this.#fatal(err),
    });
    this.#output = this.#input
      .pipe(mergeBars({ graceMs: o.graceMs, ...(o.isHalted === undefined ? {} : { isHalted: o.isHalted }) }))
      .subscribe({ next: (out) => this.#onOutput(out), error: o.fail });
    this.#live = new LiveSeriesPoll({
      client: o.client,
      clock: o.clock,
      graceMs: o.graceMs,
      closeAwarePolling: o.closeAwarePolling,
      fixedPeriod: o.fixedPeriod,
      refreshPeriodMs: o.refreshPeriodMs,
      emitEvent: o.emitEvent,
      push: (bars) => this.#push(bars),
      onCycle: (newestBarMs, durationMs) => {
        this.liveCycles++;
        o.emitEvent({ type: 'live-cycle', groups: this.series.size, durationMs, newestBarMs });
      },
      onFatal: (err) => this.#fatal(err),
    });
  }

  /**
   * Adds series (not yet in the run), each starting from its resume point (a reset of the merger),
   * then backfills them; in a live run each enters the poll once its history is in. With
   * close-aware polling a series its sinks hold joins the poll at once instead: its first answer
   * shows whether anything since what they hold is missing, and only then is its history read
   * (a takeover of series a moment behind polls them within one poll, without a `/kline` read).
   * Resolves once every one is backfilled or current.
   */
  async add(fresh: readonly KlineSeriesState[]): Promise<void> {
    const resumes = new Map<KlineSeriesState, ResumePoint>();
    for (const s of fresh) {
      const resume = this.o.resume(s.code, s.klineType);
      resumes.set(s, resume);
      this.series.set(seriesKey(s.code, s.klineType), s);
      this.#push({
        type: 'series-reset',
        code: s.code,
        klineType: s.klineType,
        // Without bars held, a long first read goes in page by page, newest first.
        ...(resume.kind === 'all'
          ? { lastClosedMs: resume.lastMs, firstHeldMs: resume.firstMs }
          : { growsBackwards: true }),
      });
    }
    this.o.emitEvent({ type: 'backfill-start', series: fresh.length });
    // Joining first: they are in the next poll already, and their workers wait for its answer only.
    const answers = new Map<KlineSeriesState, Promise<JoinAnswer>>();
    if (this.o.live && this.#live.joinsFirst)
      for (const s of fresh) {
        const resume = resumes.get(s)!;
        if (resume.kind !== 'all') continue;
        this.#histories.begin(s);
        answers.set(s, this.#live.join(s, resume.lastMs));
      }
    await runLimited(
      [...answers.keys(), ...fresh.filter((s) => !answers.has(s))],
      this.o.backfillConcurrency,
      (s) => this.#backfill(s, resumes.get(s)!, answers.get(s)),
      this.o.signal,
    );
  }

  /** Series leave the run: their bars not yet final are dropped, reads in flight go nowhere. */
  remove(keys: readonly { code: string; klineType: BarUpdate['klineType'] }[]): void {
    for (const { code, klineType } of keys) {
      const key = seriesKey(code, klineType);
      const leaving = this.series.get(key);
      if (leaving !== undefined) this.#histories.end(leaving, 'cut-short');
      this.series.delete(key);
      this.#push({ type: 'series-reset', code, klineType });
    }
    this.#live.leave(keys);
  }

  /**
   * Polls the series of the run: close-aware, the one poll goes on (it is started if it does not
   * run); otherwise the poll restarts over the series of the run now.
   */
  startLive(): void {
    this.#live.start();
  }

  get clock(): Clock {
    return this.o.clock;
  }

  /** Reports an event of the run. */
  event(e: KlineSyncEvent): void {
    this.o.emitEvent(e);
  }

  get isLive(): boolean {
    return this.#live.started;
  }

  /**
   * A backfill-only run's end: re-reads done, the newest bars that may have just closed read again
   * once that can prove them, and each first read's window of exactly N closed bars completed.
   */
  async finishBackfill(): Promise<void> {
    await this.reads.settled();
    await settleNewestBars([...this.series.values()], {
      clock: this.o.clock,
      graceMs: this.o.graceMs,
      settleWaitMs: this.o.settleWaitMs,
      concurrency: this.o.backfillConcurrency,
      signal: this.o.signal,
      reread: (s, startMs) => this.reads.read(s, { startMs }),
    });
    await this.reads.settled();
    for (const s of this.series.values()) {
      // Exactly N closed bars: the oldest of N + 1 goes in only if the newest did not close.
      const oldest = s.endBackfillWindow();
      if (oldest !== undefined) this.o.emit(oldest);
    }
    this.#histories.endAll('complete');
  }

  /** Stops polling and reading; what the merger holds unproven is dropped. */
  async close(): Promise<void> {
    this.#live.close();
    await Promise.allSettled([this.reads.settled()]);
    this.#input.complete();
    this.#output.unsubscribe();
  }

  async #backfill(s: KlineSeriesState, resume: ResumePoint, joined?: Promise<JoinAnswer>): Promise<void> {
    // A joining series' history began when it joined (its first answer may come before this).
    if (joined === undefined) this.#histories.begin(s);
    try {
      await this.#backfillSeries(s, resume, joined);
      // Backfill only, the window's oldest bar comes at the run's end: the history ends there.
      if (this.o.live) this.#histories.end(s, 'complete');
    } catch (err) {
      // A live run goes on without a code the service stopped serving (a /kline request names one).
      if (!this.o.live || !isCodeRefusal(err) || this.o.signal.aborted) throw err;
      this.#drop([{ code: s.code, error: err }]);
    }
  }

  async #backfillSeries(
    s: KlineSeriesState,
    resume: ResumePoint,
    joined?: Promise<JoinAnswer>,
  ): Promise<void> {
    if (resume.kind === 'none' && this.o.bars === 0) {
      if (this.o.live) this.#live.enter(s);
      return;
    }
    const grown = await this.reads.grow(s, resume);
    let read: FirstRead = { got: 0, wanted: 0 };
    if (joined === undefined) {
      read = await this.reads.first(s, resume);
      if (this.o.live) {
        // Exactly N closed bars of that moment, then every bar that closes from there.
        const oldest = s.endBackfillWindow();
        if (oldest !== undefined) this.o.emit(oldest);
        this.#live.enter(s);
      }
    } else {
      const answer = await joined;
      if (answer === 'gone') return;
      if (answer === 'behind') {
        read = await this.reads.first(s, resume);
        this.#live.release(s);
      }
    }
    const { got, wanted } = read;
    const { code, klineType } = s;
    this.o.emitEvent({ type: 'backfill-progress', code, klineType, bars: got, wanted });
    this.o.emitEvent({
      type: 'backfill-series-done',
      code,
      klineType,
      bars: Math.min(got + grown, this.o.bars),
      truncated: this.reads.truncated.includes(`${code}:${klineType}`),
    });
  }

  /**
   * A failure that ends the run, unless (in a live run) the service refused codes: the refused ones
   * are found (`findRefusedCodes`) and dropped, and the others go on.
   */
  #fatal(err: unknown): void {
    if (!this.o.live || !isCodeRefusal(err) || this.o.signal.aborted) {
      this.o.fail(err);
      return;
    }
    if (this.#finding) return; // one search at a time; the live poll restarts after it
    this.#finding = true;
    void findRefusedCodes(this.o.client, [...this.series.values()], this.o.signal)
      .then((refused) => {
        if (refused.length === 0)
          this.o.emitEvent({
            type: 'warning',
            message: 'the service refused a code, then served every one of them; polling on',
            error: err,
          });
        this.#drop(refused);
        if (this.series.size === 0) this.o.fail(err);
        else this.#live.resume();
      })
      .catch((e: unknown) => (this.o.signal.aborted ? undefined : this.o.fail(e)))
      .finally(() => (this.#finding = false));
  }

  /** Drops the series of refused codes from the run, each said once (`code-dropped`). */
  #drop(refused: readonly RefusedCode[]): void {
    for (const { code, error } of refused) {
      const gone = [...this.series.values()].filter((x) => x.code === code);
      if (gone.length === 0) continue;
      this.remove(gone);
      const reason = error instanceof Error ? error.message : String(error);
      this.o.emitEvent({ type: 'code-dropped', code, reason });
    }
  }

  #push(input: MergeBarsInput): void {
    if (!this.o.signal.aborted) this.#input.next(input);
  }

  #onOutput(out: MergeBarsOutput): void {
    if (out.type === 'gap') {
      this.#onGap(out);
      return;
    }
    const s = this.series.get(seriesKey(out.code, out.klineType));
    if (out.final) {
      const warning = this.#disagreements.note(out.code, out.klineType, out.tsMs);
      if (warning !== undefined) this.o.emitEvent({ type: 'warning', message: warning });
    }
    if (s !== undefined && s.note(out, !this.o.live)) this.o.emit(out);
  }

  #onGap(gap: GapMarker): void {
    const s = gap.klineType === undefined ? undefined : this.series.get(seriesKey(gap.code, gap.klineType));
    const { fromMs, toMs } = gap;
    if (
      gap.reason === MERGE_GAP_REASONS.missingBars &&
      s !== undefined &&
      fromMs !== undefined &&
      toMs !== undefined
    ) {
      // Most such holes are history not landed yet: reported only where the re-read finds none.
      this.o.emitEvent({ type: 'bars-awaited', code: gap.code, klineType: s.klineType, fromMs, toMs });
      this.reads.reread(s, fromMs, (bars) => {
        const left =
          bars === undefined
            ? [gap]
            : holesLeft({ ...gap, fromMs, toMs }, s.klineType, bars, this.o.isHalted);
        for (const hole of left) this.#report(s, hole);
      });
      return;
    }
    if (gap.reason === MERGE_GAP_REASONS.unconfirmed && s !== undefined && fromMs !== undefined)
      this.reads.reread(s, fromMs);
    // The pager's own markers were reported when read: once is enough.
    if (gap.reason === MERGE_GAP_REASONS.unconfirmed || isPagerGap(gap) || s === undefined) return;
    this.#report(s, gap);
  }

  #report(s: KlineSeriesState, gap: GapMarker): void {
    this.o.emitEvent(gapEvent(gap.code, s.klineType, gap));
    this.o.emit(gap);
  }
}
