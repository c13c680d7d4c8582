import {
  calendarOf,
  type Bar,
  type BatchKlineGroupResult,
  type Clock,
  type KlineType,
  type QuoteflowClient,
  seriesKey,
} from '@quoteflow/core';
import { KLINE_PERIOD_MS } from '@quoteflow/core/internal';
import type { Subscription } from 'rxjs';
import type { KlineSyncEvent } from '../kline-sync-options.js';
import type { KlineSeriesState } from './kline-series-state.js';
import { pollLiveKlines } from './live-kline-poll.js';
import { LivePollPlanner } from './live-poll-planner.js';

/** What a {@link LiveSeriesPoll} takes. */
export interface LiveSeriesPollOptions {
  readonly client: QuoteflowClient;
  readonly clock: Clock;
  readonly graceMs: number;
  readonly closeAwarePolling: boolean;
  /** Whether the caller fixed the period (then polls keep it instead of the plan's pace). */
  readonly fixedPeriod: boolean;
  /** The poll period for the codes polled when the poll (re)starts. */
  readonly refreshPeriodMs: (codes: readonly string[]) => number;
  readonly emitEvent: (e: KlineSyncEvent) => void;
  /** Bars of the series in the poll, in arrival order (the merger's input). */
  readonly push: (bars: Bar[]) => void;
  /** After the last answer of a poll: the newest bar start in it and the poll's duration. */
  readonly onCycle: (newestBarMs: number | undefined, durationMs: number) => void;
  readonly onFatal: (error: unknown) => void;
}

/** How the first answer of a joining series went (see {@link LiveSeriesPoll.join}). */
export type JoinAnswer = 'connected' | 'behind' | 'gone';

interface Joining {
  /** The newest bar the sinks hold. */
  readonly lastMs: number;
  /** Answered, and its history is being read: its answers wait in `held`. */
  reading: boolean;
  readonly held: (readonly Bar[])[];
  readonly answer: (result: JoinAnswer) => void;
}

/**
 * The live poll of a K-line run over the series in it. With close-aware polling (the default) one
 * poll runs for the whole run and series enter and leave it between polls (`LivePollPlanner`
 * chooses each poll's series), so a takeover neither restarts the poll nor aborts a request that
 * holds the token's one `/batch-kline` slot; without it, the poll restarts over the series in it
 * at each {@link start} (its period depends on them).
 *
 * A series the sinks hold can {@link join} before its history is read: it goes into the next poll
 * (after the series polled already, whatever its market's hours), and that answer decides. When it overlaps what the sinks
 * hold (its older bar is one they hold, or, where bars are aligned to UTC, the period right after
 * it) the series is current without a `/kline` request; otherwise its answers wait until its
 * history is read ({@link release}), so the merger never sees a hole that the read fills a moment
 * later.
 */
export class LiveSeriesPoll {
  readonly #series = new Map<string, KlineSeriesState>();
  readonly #joining = new Map<string, Joining>();
  readonly #planner: LivePollPlanner | undefined;
  #subscription: Subscription | undefined;
  #started = false;
  #closed = false;
  /** A start is queued for the end of the current task (see {@link #run}). */
  #starting = false;

  constructor(private readonly o: LiveSeriesPollOptions) {
    if (o.closeAwarePolling)
      this.#planner = new LivePollPlanner([], o.graceMs, o.client.limits.batchKlineGroups);
  }

  /** Whether a series may {@link join} before its history is read (close-aware polling). */
  get joinsFirst(): boolean {
    return this.#planner !== undefined;
  }

  /** Whether {@link start} was called. */
  get started(): boolean {
    return this.#started;
  }

  /**
   * Puts `s` in the poll: with close-aware polling at the next poll (the poll starts if it is not
   * running), else at the next {@link start}.
   */
  enter(s: KlineSeriesState): void {
    this.#series.set(seriesKey(s.code, s.klineType), s);
    if (this.#planner === undefined) return;
    this.#planner.add(s);
    this.#run();
  }

  /**
   * Puts `s` (whose sinks hold bars up to `lastMs`) in the next poll, before its history is read.
   * Resolves with its first answer: `connected` (its bars went to the merger: the series is current),
   * `behind` (read its history from `lastMs`, then {@link release} it; its answers wait until then),
   * or `gone` (it left the poll, or the poll closed, before an answer). Close-aware polling only.
   */
  join(s: KlineSeriesState, lastMs: number): Promise<JoinAnswer> {
    const key = seriesKey(s.code, s.klineType);
    return new Promise<JoinAnswer>((answer) => {
      this.#joining.set(key, { lastMs, reading: false, held: [], answer });
      this.#series.set(key, s);
      this.#planner!.add(s, true);
      this.#run();
    });
  }

  /** A series that joined `behind` has its history read: its answers held meanwhile go to the merger. */
  release(s: KlineSeriesState): void {
    const key = seriesKey(s.code, s.klineType);
    const joining = this.#joining.get(key);
    if (joining === undefined) return;
    this.#joining.delete(key);
    if (this.#series.get(key) === s) for (const bars of joining.held) this.o.push([...bars]);
  }

  /** Takes series out of the poll; their answers in flight go nowhere. */
  leave(series: readonly { readonly code: string; readonly klineType: KlineType }[]): void {
    for (const { code, klineType } of series) {
      const key = seriesKey(code, klineType);
      this.#series.delete(key);
      this.#joining.get(key)?.answer('gone');
      this.#joining.delete(key);
    }
    this.#planner?.remove(series);
  }

  /**
   * Polls the series in the poll: with close-aware polling, starts the poll unless it runs (after
   * a failure that ended it, say); otherwise restarts it over them at their period.
   */
  start(): void {
    this.#started = true;
    if (this.#planner === undefined) this.#subscription?.unsubscribe();
    this.#run();
  }

  /** Polls again after a failure ended the poll (the codes the service refused left it). */
  resume(): void {
    if (this.#subscription?.closed === true) this.#run();
  }

  /** Stops polling; a series still waiting for its first answer gets `gone`. */
  close(): void {
    this.#closed = true;
    this.#subscription?.unsubscribe();
    for (const joining of this.#joining.values()) joining.answer('gone');
    this.#joining.clear();
  }

  /**
   * Starts the poll unless it runs; without a planner, only once {@link start} was called. Queued
   * for the end of the current task: the first poll asks at once, and series joining together (a
   * takeover's) are then all in it, not the first one alone.
   */
  #run(): void {
    if (this.#starting) return;
    this.#starting = true;
    queueMicrotask(() => {
      this.#starting = false;
      this.#runNow();
    });
  }

  #runNow(): void {
    if (this.#closed || (this.#subscription !== undefined && !this.#subscription.closed)) return;
    if (this.#series.size === 0 || (this.#planner === undefined && !this.#started)) return;
    const { o } = this;
    const polled = [...this.#series.values()];
    this.#subscription = pollLiveKlines({
      client: o.client,
      series: polled,
      refreshPeriodMs: o.refreshPeriodMs([...new Set(polled.map((s) => s.code))]),
      ...(this.#planner === undefined ? {} : { planner: this.#planner }),
      fixedPeriod: o.fixedPeriod,
      clock: o.clock,
      emitEvent: o.emitEvent,
      onAnswer: (results) => this.#onAnswer(results),
      onCycle: o.onCycle,
      onFatal: o.onFatal,
    });
  }

  /** One answer: bars of series in the poll to the merger; a joining series' first answer decides. */
  #onAnswer(results: readonly BatchKlineGroupResult[]): void {
    const bars: Bar[] = [];
    for (const r of results) {
      const key = seriesKey(r.code, r.klineType);
      if (!this.#series.has(key)) continue; // left the poll while asked for
      const joining = this.#joining.get(key);
      if (joining === undefined) bars.push(...r.bars);
      else this.#onJoiningAnswer(key, r, joining);
    }
    if (bars.length > 0) this.o.push(bars);
  }

  #onJoiningAnswer(key: string, r: BatchKlineGroupResult, joining: Joining): void {
    if (joining.reading) {
      joining.held.push(r.bars);
      return;
    }
    this.#planner?.joined(r.code, r.klineType);
    if (connects(joining.lastMs, r.bars[0], r.klineType, r.code)) {
      this.#joining.delete(key);
      if (r.bars.length > 0) this.o.push([...r.bars]);
      joining.answer('connected');
    } else {
      joining.reading = true;
      joining.held.push(r.bars);
      joining.answer('behind');
    }
  }
}

/**
 * Whether a live answer whose older bar is `first` follows on from the newest bar the sinks hold
 * (`lastMs`) with no bar between: it is one they hold (or older), or, where bars run around the
 * clock aligned to UTC (crypto, forex), the period right after it. Elsewhere a session's edge may
 * hide one bar from the calendar's check (`barsMissingBetween` spares every labelling), so only an
 * overlap counts.
 */
function connects(lastMs: number, first: Bar | undefined, klineType: KlineType, code: string): boolean {
  if (first === undefined) return false;
  if (first.tsMs <= lastMs) return true;
  const periodMs = KLINE_PERIOD_MS[klineType];
  return periodMs !== undefined && calendarOf(code).segments.length === 0 && first.tsMs - lastMs === periodMs;
}
