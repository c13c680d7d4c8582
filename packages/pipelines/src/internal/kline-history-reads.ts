import { klineHistory, type Bar, type GapMarker, type QuoteflowClient } from '@quoteflow/core';
import { HISTORY_GAP_REASONS, MAX_KLINE_PER_REQUEST } from '@quoteflow/core/internal';
import type { MergeBarsInput } from '@quoteflow/operators';
import type { KlineSyncEvent } from '../kline-sync-options.js';
import { collect } from './collect.js';
import { isFatal } from './error-kinds.js';
import { gapEvent } from './gap-event.js';
import type { KlineSeriesState, RereadWaiter } from './kline-series-state.js';
import { readOlderHistory } from './older-history.js';
import { pageBackwards } from './page-backwards.js';
import type { ResumePoint } from './resume-points.js';
import { shortOfClosedBars } from './short-of-closed-bars.js';

/** A read of history: from an instant, or the newest bars. */
type HistoryQuery = { readonly startMs: number } | { readonly bars: number };

interface Fetched {
  readonly query: HistoryQuery;
  readonly bars: readonly Bar[];
  readonly gaps: readonly GapMarker[];
}

/** What a series' first read of a run took in: how many bars, and how many it wanted. */
export interface FirstRead {
  readonly got: number;
  readonly wanted: number;
}

/** What {@link KlineHistoryReads} needs from the run around it. */
export interface HistoryReadsContext {
  readonly client: QuoteflowClient;
  /** Closed bars per series wanted on a first read. */
  readonly bars: number;
  readonly graceMs: number;
  readonly signal: AbortSignal;
  /** Into the merger, in arrival order. */
  readonly push: (input: MergeBarsInput) => void;
  /** Whether `s` is still the run's state of its series (a read that outlived a removal goes nowhere). */
  readonly isCurrent: (s: KlineSeriesState) => boolean;
  readonly emitEvent: (e: KlineSyncEvent) => void;
  readonly fail: (err: unknown) => void;
}

/**
 * Every history read of a K-line run, through core's one pager (`klineHistory`) into the merger:
 * a series' first read (its N newest bars, or from where its sinks resume), older history where
 * its sinks hold fewer than N bars, and re-reads the merger asks for. Shortfalls (a stock's one
 * page, a service out of history) are said once per series.
 */
export class KlineHistoryReads {
  readonly truncated: string[] = [];
  readonly #rereads = new Set<Promise<void>>();

  constructor(private readonly ctx: HistoryReadsContext) {}

  /** Re-reads still running. */
  get pendingRereads(): number {
    return this.#rereads.size;
  }

  /** Waits for every re-read, including those they start. */
  async settled(): Promise<void> {
    while (this.#rereads.size > 0) await Promise.allSettled([...this.#rereads]);
  }

  /**
   * A series' first read of this run, from its resume point; returns how many bars it read and how
   * many it wanted (N + 1 on a fresh read: the newest may still be forming).
   */
  async first(s: KlineSeriesState, resume: ResumePoint): Promise<FirstRead> {
    const { bars } = this.ctx;
    if (resume.kind === 'none') return this.#firstFresh(s, bars + 1, true);
    if (resume.kind === 'all') {
      const got = (await this.read(s, { startMs: resume.lastMs })).length;
      return { got, wanted: got };
    }
    // A sink lacks the series: it gets the N newest bars, the others what they miss since lastMs:
    // whichever read holds more, the other's bars being a part of it (the merger takes no bar older
    // than one it closed, so only one of them goes in).
    const since = await this.#fetch(s, { startMs: resume.lastMs });
    if (since.bars.length > bars) return { got: this.#deliver(s, since).length, wanted: since.bars.length };
    return this.#firstFresh(s, bars + 1, false);
  }

  /**
   * The `wanted` newest bars (N + 1: the newest may still be forming; the oldest waits until that is
   * known; `window` keeps exactly N closed bars). Where the code pages back and one page does not hold them, the newest page goes into the
   * merger first and each older page as it arrives (final by the newer bars read before it), so a
   * stop or a failure between pages keeps what was read. Of the pages only a count and the newest
   * bar are kept: the merger and the sinks hold what they need, and a large N would otherwise keep
   * every page in memory until the last one arrived.
   */
  async #firstFresh(s: KlineSeriesState, wanted: number, window: boolean): Promise<FirstRead> {
    const { client, signal } = this.ctx;
    if (wanted <= MAX_KLINE_PER_REQUEST || !client.canPageBackwards(s.code)) {
      const got = await this.read(s, { bars: wanted }, (history) => {
        if (window && history.length === wanted) s.beginBackfillWindow(history);
      });
      return { got: got.length, wanted };
    }
    const newestPage = this.#deliver(s, {
      ...(await this.#fetch(s, { bars: MAX_KLINE_PER_REQUEST })),
      query: { bars: wanted },
    });
    const oldestOfPage = newestPage[0];
    const newest = newestPage.at(-1);
    let got = newestPage.length;
    if (oldestOfPage === undefined || got < MAX_KLINE_PER_REQUEST || !this.ctx.isCurrent(s))
      return { got, wanted };
    const paged = await pageBackwards(client, s, oldestOfPage.tsMs, wanted - got, signal, (page) => {
      if (!this.ctx.isCurrent(s)) return;
      // The page that completes the N + 1 holds the window's oldest bar: set before it goes in.
      if (window && got + page.length === wanted) s.beginBackfillWindow([page[0]!, newest!]);
      got += page.length;
      this.ctx.push(page);
    });
    if (paged.exhausted && this.ctx.isCurrent(s)) {
      const marker: GapMarker = {
        type: 'gap',
        code: s.code,
        klineType: s.klineType,
        fromMs: undefined,
        toMs: paged.oldestMs ?? oldestOfPage.tsMs,
        reason: `${s.code} kline_type ${s.klineType}: ${HISTORY_GAP_REASONS.exhausted}; got ${got} of ${wanted} bars`,
      };
      const short = shortOfClosedBars(marker, newest, got, wanted - 1, this.ctx.graceMs);
      if (short !== undefined) this.#noteShort(s, short);
    }
    return { got, wanted };
  }

  /**
   * Older bars where every sink holds fewer than N: through the merger (final by the bars held), each
   * page as it arrives.
   */
  async grow(s: KlineSeriesState, resume: ResumePoint): Promise<number> {
    if (resume.kind !== 'all' || resume.rows >= this.ctx.bars) return 0;
    const { client, bars, signal } = this.ctx;
    const held = { firstMs: resume.firstMs, lastMs: resume.lastMs, rows: resume.rows };
    const older = await readOlderHistory(client, s, held, bars, signal, (page) => {
      if (this.ctx.isCurrent(s)) this.ctx.push(page);
    });
    if (!this.ctx.isCurrent(s)) return 0;
    if (older.shortBecause !== undefined) this.#noteShort(s, older.shortBecause);
    return older.got;
  }

  /**
   * The merger asks for the history of `s` from `fromMs` again (a bar unproven, bars missing);
   * `done`, if given, hears what the read that covers `fromMs` found (undefined if it failed).
   */
  reread(s: KlineSeriesState, fromMs: number, done?: RereadWaiter['done']): void {
    s.rereadFromMs = Math.min(s.rereadFromMs ?? fromMs, fromMs);
    if (done !== undefined) s.rereadWaiters.push({ fromMs, done });
    if (s.rereading) return;
    s.rereading = true;
    const p = this.#rereadLoop(s)
      .catch((err: unknown) => {
        if (this.ctx.signal.aborted) return;
        const waiting = s.rereadWaiters.splice(0);
        if (isFatal(err)) {
          this.ctx.fail(err);
          return;
        }
        this.ctx.emitEvent({
          type: 'warning',
          message: `re-reading ${s.code}:${s.klineType} failed; retried on the next gap`,
          error: err,
        });
        for (const w of waiting) w.done(undefined);
      })
      .finally(() => {
        s.rereading = false;
        this.#rereads.delete(p);
      });
    this.#rereads.add(p);
  }

  async #rereadLoop(s: KlineSeriesState): Promise<void> {
    while (s.rereadFromMs !== undefined && !this.ctx.signal.aborted && this.ctx.isCurrent(s)) {
      const from = s.rereadFromMs;
      s.rereadFromMs = undefined;
      const covered = s.rereadWaiters.filter((w) => w.fromMs >= from);
      const bars = await this.read(s, { startMs: from });
      s.rereadWaiters = s.rereadWaiters.filter((w) => !covered.includes(w));
      // A series that left the run meanwhile has nobody to tell.
      if (this.ctx.isCurrent(s)) for (const w of covered) w.done(bars);
    }
  }

  /** History of one series from `startMs` or its `bars` newest, into the merger. */
  async read(
    s: KlineSeriesState,
    query: HistoryQuery,
    beforePush?: (bars: readonly Bar[]) => void,
  ): Promise<readonly Bar[]> {
    const fetched = await this.#fetch(s, query);
    beforePush?.(fetched.bars);
    return this.#deliver(s, fetched);
  }

  /** One call of the pager; its bars and markers, not yet in the merger. */
  async #fetch(s: KlineSeriesState, query: HistoryQuery): Promise<Fetched> {
    const items = await collect(
      klineHistory(this.ctx.client, {
        code: s.code,
        klineType: s.klineType,
        ...query,
        sourceId: `${s.code}:${s.klineType}`,
      }),
      this.ctx.signal,
    );
    return {
      query,
      bars: items.filter((x): x is Bar => x.type === 'bar'),
      gaps: items.filter((x): x is GapMarker => x.type === 'gap'),
    };
  }

  /** Into the merger (markers first), unless the series left the run meanwhile. */
  #deliver(s: KlineSeriesState, { query, bars, gaps }: Fetched): readonly Bar[] {
    if (!this.ctx.isCurrent(s)) return [];
    for (const gap of gaps) {
      // A first read asks for N + 1 bars: said in the N closed bars asked for, if short of them.
      const short =
        'bars' in query
          ? shortOfClosedBars(gap, bars.at(-1), bars.length, query.bars - 1, this.ctx.graceMs)
          : gap;
      if (short !== undefined) this.#noteShort(s, short);
      this.ctx.push(gap);
    }
    if (bars.length > 0) this.ctx.push(bars);
    return bars;
  }

  /** The service had fewer bars than asked for (or the code cannot page back): said once. */
  #noteShort(s: KlineSeriesState, gap: GapMarker): void {
    const key = `${s.code}:${s.klineType}`;
    if (this.truncated.includes(key)) return;
    this.truncated.push(key);
    this.ctx.emitEvent(gapEvent(s.code, s.klineType, gap));
  }
}

/** Whether a gap marker is the pager's own shortfall (reported when read, once). */
export function isPagerGap(gap: GapMarker): boolean {
  return Object.values(HISTORY_GAP_REASONS).some((r) => gap.reason.includes(r));
}
