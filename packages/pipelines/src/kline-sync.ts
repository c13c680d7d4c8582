import {
  estimatePlan,
  HISTORY_GAP_REASONS,
  klineHistory,
  type Bar,
  type GapMarker,
  limitOverridesOf,
} from '@quoteflow/core';
import {
  MERGE_GAP_REASONS,
  mergeBars,
  type Halt,
  seriesKey,
  type MergeBarsInput,
  type MergeBarsOutput,
} from '@quoteflow/operators';
import { Subject, type Subscription } from 'rxjs';
import { collect } from './internal/collect.js';
import { gapEvent } from './internal/gap-event.js';
import { isAbort, isFatal } from './internal/error-kinds.js';
import { KlineDelivery } from './internal/kline-delivery.js';
import { Checkpoints } from './internal/checkpoints.js';
import { KlineSeriesState } from './internal/kline-series-state.js';
import { checkUniverse, missingSeries } from './internal/kline-universe.js';
import { pollLiveKlines } from './internal/live-kline-poll.js';
import { LivePollPlanner } from './internal/live-poll-planner.js';
import { readHalts } from './read-halts.js';
import { readOlderHistory } from './internal/older-history.js';
import { ServiceHalts } from './internal/service-halts.js';
import { runLimited } from './internal/run-limited.js';
import { settleNewestBars } from './internal/settle-delay.js';
import { shortOfClosedBars } from './internal/short-of-closed-bars.js';
import { StopControl } from './internal/stop-control.js';
import {
  KLINE_SYNC_DEFAULTS,
  type KlineSyncEvent,
  type KlineSyncHandle,
  type KlineSyncOptions,
  type KlineSyncSummary,
} from './kline-sync-options.js';
import { PipelineError } from './pipeline-error.js';

/**
 * K-line sync, the service's recommended usage done right, composed of the same public pieces a
 * user would compose: core's `klineHistory` (history through `/kline`, one pager) and
 * `pollLatestBatches` (`/batch-kline` at the plan's refresh period), the `mergeBars` operator
 * (finality from evidence, closed bars exactly once and in order), and the sinks' `DatasetWriter`
 * and `KafkaSink`.
 *
 * - First run: N closed bars of history per series, then live polling. A restart resumes from the
 *   dataset's newest closed bar per series (files are the truth; the state file is a checkpoint),
 *   and a series that holds fewer than N bars gets the older ones too (where the code can page back).
 * - A bar is written only once `mergeBars` has proven it final: a newer bar seen with it, or a read
 *   after its session closed by the calendar. When live polls skip a bar or the calendar expects
 *   bars no answer held, the series' history is read again from there before newer bars are written.
 * - A backfill-only run whose newest bar may have just closed reads it again once that can prove it
 *   (within `settleWaitMs`), so `bars` closed bars are exact even across a bar boundary.
 *
 * @example
 * ```ts
 * const sync = klineSync({ client, codes: ['BTCUSDT', 'AAPL.US'], klineTypes: [1], files: { dir: './data' } });
 * process.on('SIGINT', () => void sync.stop());
 * const summary = await sync.done;
 * ```
 */
export function klineSync(options: KlineSyncOptions): KlineSyncHandle {
  const { client, codes, klineTypes } = options;
  checkUniverse(codes, klineTypes);
  const bars = options.bars ?? KLINE_SYNC_DEFAULTS.bars;
  if (!Number.isInteger(bars) || bars < 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', `klineSync: "bars" must be an integer >= 0, got ${bars}`);
  const clock = options.clock ?? client.clock;
  // The plan's refresh period for the universe; recomputed when codes are added.
  const universe = [...codes];
  const refreshPeriodFor = (): number => {
    if (options.refreshPeriodMs !== undefined) return options.refreshPeriodMs;
    const { live } = estimatePlan(
      client.plan,
      { codes: universe, klineTypes, bars },
      limitOverridesOf(client.limits),
    );
    // The plan's period counts on close-aware polling (no request for a closed market); polling
    // every series at every cycle has to make the day's budget last all day.
    return Math.max(
      1_000,
      options.closeAwarePolling === false ? live.refreshPeriodPollingAllMs : live.refreshPeriodMs,
    );
  };
  let refreshPeriodMs = refreshPeriodFor();
  const checkpointMs = options.checkpointMs ?? KLINE_SYNC_DEFAULTS.checkpointMs;
  const backfillConcurrency = options.backfillConcurrency ?? KLINE_SYNC_DEFAULTS.backfillConcurrency;
  const graceMs = options.graceMs ?? KLINE_SYNC_DEFAULTS.graceMs;
  const settleWaitMs = options.settleWaitMs ?? KLINE_SYNC_DEFAULTS.settleWaitMs;
  const live = options.live ?? true;
  const emitEvent = (e: KlineSyncEvent): void => {
    try {
      options.onEvent?.(e);
    } catch {
      // A listener's failure must not stop the data.
    }
  };

  const control = new StopControl(options.signal);
  const signal = control.signal;

  const series = new Map<string, KlineSeriesState>();
  for (const code of codes)
    for (const klineType of klineTypes)
      series.set(seriesKey(code, klineType), new KlineSeriesState(code, klineType));

  let liveCycles = 0;
  const truncatedSeries: string[] = [];
  let delivery: KlineDelivery | undefined;
  // `add()` before the run is ready waits for it; after that it goes straight to the run.
  let addToRun: ((more: readonly string[]) => Promise<void>) | undefined;
  let removeFromRun: ((less: readonly string[]) => Promise<void>) | undefined;
  const waitingAdds: { more: readonly string[]; resolve: () => void; reject: (e: unknown) => void }[] = [];

  const run = async (): Promise<KlineSyncSummary> => {
    const sinks = await KlineDelivery.open({
      files: options.files,
      kafka: options.kafka,
      statePath: options.statePath,
      live,
      onUpdate: options.onUpdate,
      emitEvent,
      nowMs: () => clock.now(),
    });
    delivery = sinks;
    // Halts in the dataset's own suspension records (`quoteflow suspensions --out` to the same
    // DIR) explain missing bars: no gap reported, nothing re-read. Read again at each checkpoint.
    const filesDir = options.files?.dir;
    let halts: readonly Halt[] = filesDir === undefined ? [] : await readHalts(filesDir);
    // With those the service reports for the universe's covered codes (asked at start, each minute).
    const known = new ServiceHalts({ client, clock, signal, universe, emitEvent, on: options.serviceHalts });
    const state = sinks.state;
    const lastClosed = new Map<string, number>();
    for (const s of series.values()) {
      const ts = state.lastClosed(s.code, s.klineType);
      if (ts !== undefined) lastClosed.set(seriesKey(s.code, s.klineType), ts);
    }

    let failure: unknown;
    const fail = (err: unknown): void => {
      failure ??= err;
      control.stop(err);
    };

    const onOutput = (out: MergeBarsOutput): void => {
      if (out.type === 'gap') {
        onGap(out);
        return;
      }
      const s = series.get(seriesKey(out.code, out.klineType));
      if (s !== undefined && s.note(out, !live)) sinks.deliver(out);
    };
    const onGap = (gap: GapMarker): void => {
      const klineType = gap.klineType ?? klineTypes[0]!;
      const s = series.get(seriesKey(gap.code, klineType));
      const ours =
        gap.reason === MERGE_GAP_REASONS.unconfirmed || gap.reason === MERGE_GAP_REASONS.missingBars;
      if (ours && s !== undefined && gap.fromMs !== undefined) requestReread(s, gap.fromMs);
      // The pager's own markers were reported when read (noteShortHistory): once is enough.
      const fromPager = Object.values(HISTORY_GAP_REASONS).some((r) => gap.reason.includes(r));
      if (gap.reason !== MERGE_GAP_REASONS.unconfirmed && !fromPager)
        emitEvent(gapEvent(gap.code, klineType, gap));
    };

    // The one execution path: every answer of the service goes through mergeBars, in arrival order.
    const input$ = new Subject<MergeBarsInput>();
    const output = input$
      .pipe(
        mergeBars({
          graceMs,
          lastClosed,
          isHalted: (code, klineType, afterMs, beforeMs) =>
            known.explain(halts, code, klineType, afterMs, beforeMs),
          onReport: (r) => emitEvent({ type: 'warning', message: `bar dropped or corrected: ${r.message}` }),
        }),
      )
      .subscribe({ next: onOutput, error: fail });
    const push = (input: MergeBarsInput): void => {
      if (!signal.aborted || failure === undefined) input$.next(input);
    };
    /**
     * Whether `s` is still this sync's state of its series: a read that outlived a removal (or a
     * removal and a re-add) must not feed the merger, which starts the series again on re-add.
     */
    const isCurrent = (s: KlineSeriesState): boolean => series.get(seriesKey(s.code, s.klineType)) === s;

    /** The service had fewer bars than asked for (or the code cannot page back): said in the summary. */
    const noteShortHistory = (s: KlineSeriesState, gap: GapMarker): void => {
      const key = `${s.code}:${s.klineType}`;
      // Every read of such a series meets the same limit: it is said once.
      if (truncatedSeries.includes(key)) return;
      truncatedSeries.push(key);
      emitEvent(gapEvent(s.code, s.klineType, gap));
    };

    /** History of one series from `startMs` (a re-read) or its N + 1 newest bars, into the merger. */
    const readHistory = async (
      s: KlineSeriesState,
      query: { readonly startMs: number } | { readonly bars: number },
      beforePush?: (bars: readonly Bar[]) => void,
    ): Promise<readonly Bar[]> => {
      const items = await collect(
        klineHistory(client, {
          code: s.code,
          klineType: s.klineType,
          ...query,
          sourceId: `${s.code}:${s.klineType}`,
        }),
        signal,
      );
      if (!isCurrent(s)) return [];
      const got = items.filter((x): x is Bar => x.type === 'bar');
      for (const gap of items.filter((x): x is GapMarker => x.type === 'gap')) {
        // A first read asks for N + 1 bars: said in the N closed bars asked for, if short of them.
        const short = 'bars' in query ? shortOfClosedBars(gap, got, query.bars - 1, graceMs) : gap;
        if (short !== undefined) noteShortHistory(s, short);
        push(gap);
      }
      beforePush?.(got);
      if (got.length > 0) push(got);
      return got;
    };

    const requestReread = (s: KlineSeriesState, fromMs: number): void => {
      s.rereadFromMs = Math.min(s.rereadFromMs ?? fromMs, fromMs);
      if (s.rereading) return;
      s.rereading = true;
      const loop = async (): Promise<void> => {
        while (s.rereadFromMs !== undefined && !signal.aborted && isCurrent(s)) {
          const from = s.rereadFromMs;
          s.rereadFromMs = undefined;
          await readHistory(s, { startMs: from });
        }
      };
      const p = loop()
        .catch((err: unknown) => {
          if (signal.aborted) return;
          if (isFatal(err)) fail(err);
          else
            emitEvent({
              type: 'warning',
              message: `re-reading ${s.code}:${s.klineType} failed; retried on the next gap`,
              error: err,
            });
        })
        .finally(() => {
          s.rereading = false;
          rereads.delete(p);
        });
      rereads.add(p);
    };
    const rereads = new Set<Promise<void>>();

    const checkpoints = new Checkpoints(
      clock,
      checkpointMs,
      async () => {
        await sinks.checkpoint();
        if (filesDir !== undefined) halts = await readHalts(filesDir);
      },
      fail,
    );

    /** A dataset that holds fewer than `bars` bars of a series grows backwards (a larger --bars). */
    const growHistory = async (s: KlineSeriesState): Promise<number> => {
      const held = state.extent(s.code, s.klineType);
      if (held === undefined || held.rows >= bars) return 0;
      const older = await readOlderHistory(client, s, held, bars, signal);
      if (!isCurrent(s)) return 0;
      if (older.shortBecause !== undefined) noteShortHistory(s, older.shortBecause);
      for (const bar of older.bars) sinks.deliver({ ...bar, type: 'bar-update', final: true, revision: 0 });
      return older.bars.length;
    };

    const backfillSeries = async (s: KlineSeriesState): Promise<void> => {
      const resumeMs = state.lastClosed(s.code, s.klineType);
      if (resumeMs === undefined && bars === 0) return;
      const grown = resumeMs === undefined ? 0 : await growHistory(s);
      const wanted = resumeMs === undefined ? bars + 1 : undefined;
      const got = await readHistory(
        s,
        wanted === undefined ? { startMs: resumeMs! } : { bars: wanted },
        (history) => {
          // N + 1 bars: the newest may still be forming. The oldest waits until that is known.
          if (wanted !== undefined && history.length === wanted) s.beginBackfillWindow(history);
        },
      );
      emitEvent({
        type: 'backfill-progress',
        code: s.code,
        klineType: s.klineType,
        bars: got.length,
        wanted: wanted ?? got.length,
      });
      emitEvent({
        type: 'backfill-series-done',
        code: s.code,
        klineType: s.klineType,
        bars: Math.min(got.length + grown, bars),
        truncated: truncatedSeries.includes(`${s.code}:${s.klineType}`),
      });
    };

    const settle = (): Promise<void> =>
      settleNewestBars([...series.values()], {
        clock,
        graceMs,
        settleWaitMs,
        concurrency: backfillConcurrency,
        signal,
        reread: (s, startMs) => readHistory(s, { startMs }),
      });

    let live$: Subscription | undefined;
    const startLive = (): void => {
      live$?.unsubscribe();
      const polled = [...series.values()];
      live$ = pollLiveKlines({
        client,
        series: polled,
        refreshPeriodMs,
        ...(options.closeAwarePolling === false
          ? {}
          : { planner: new LivePollPlanner(polled, graceMs, client.limits.batchKlineGroups) }),
        fixedPeriod: options.refreshPeriodMs !== undefined,
        clock,
        emitEvent,
        onBars: push,
        onCycle: (newestBarMs, durationMs) => {
          liveCycles++;
          emitEvent({ type: 'live-cycle', groups: series.size, durationMs, newestBarMs });
        },
        onFatal: fail,
      });
    };
    addToRun = async (more) => {
      if (missingSeries(series, more, klineTypes).length === 0 || signal.aborted) return;
      // What the previous holder of these series wrote is in the dataset: read it first. They join
      // the run (the live poll, the merger's outputs) only once the merger starts them from there:
      // a live answer before that would close a bar the dataset may already hold.
      await checkpoints.now();
      await sinks.readNewFiles();
      const fresh = missingSeries(series, more, klineTypes);
      if (fresh.length === 0 || signal.aborted) return;
      for (const s of fresh) {
        series.set(seriesKey(s.code, s.klineType), s);
        const ts = state.lastClosed(s.code, s.klineType);
        push({
          type: 'series-reset',
          code: s.code,
          klineType: s.klineType,
          ...(ts === undefined ? {} : { lastClosedMs: ts }),
        });
      }
      universe.push(...new Set(fresh.map((s) => s.code).filter((code) => !universe.includes(code))));
      refreshPeriodMs = refreshPeriodFor();
      emitEvent({ type: 'backfill-start', series: fresh.length });
      await runLimited(fresh, backfillConcurrency, backfillSeries, signal);
      if (live$ !== undefined && !signal.aborted) startLive();
    };
    removeFromRun = async (less) => {
      // Their bars not yet final are dropped, reads still in flight go nowhere (isCurrent); what was
      // delivered is made durable before the caller hands them on. They may come back later (add).
      for (const code of less)
        for (const klineType of klineTypes) {
          series.delete(seriesKey(code, klineType));
          push({ type: 'series-reset', code, klineType });
        }
      universe.splice(0, universe.length, ...universe.filter((code) => !less.includes(code)));
      if (live$ !== undefined && !signal.aborted) startLive();
      await checkpoints.now();
    };
    for (const w of waitingAdds.splice(0)) addToRun(w.more).then(w.resolve, w.reject);
    try {
      await known.start(); // before the first bar is judged
      const startedAt = clock.now();
      emitEvent({ type: 'backfill-start', series: series.size });
      checkpoints.start();
      await runLimited([...series.values()], backfillConcurrency, backfillSeries, signal);
      if (!signal.aborted)
        emitEvent({ type: 'backfill-done', series: series.size, durationMs: clock.now() - startedAt });
      if (live && !signal.aborted) {
        startLive();
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          else signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } else if (!signal.aborted) {
        while (rereads.size > 0) await Promise.allSettled([...rereads]);
        await settle();
        while (rereads.size > 0) await Promise.allSettled([...rereads]);
        for (const s of series.values()) {
          // Exactly N closed bars: the oldest of N + 1 goes in only if the newest did not close.
          const oldest = s.endBackfillWindow();
          if (oldest !== undefined) sinks.deliver(oldest);
        }
      }
    } catch (err) {
      if (!signal.aborted || failure === undefined) failure ??= err;
    } finally {
      known.stop();
      live$?.unsubscribe();
      control.release();
      await Promise.allSettled([...rereads]);
      input$.complete();
      output.unsubscribe();
      try {
        await checkpoints.final();
      } catch (err) {
        failure ??= err;
      }
      const closeFailure = await sinks.close();
      failure ??= closeFailure;
    }
    // A stop (signal) is a normal end; an error that caused the stop is not.
    if (failure !== undefined && !isAbort(failure, signal)) throw failure;
    return summary();
  };

  const summary = (): KlineSyncSummary => ({
    series: series.size,
    closedBars: delivery?.closedBars ?? 0,
    formingUpdates: delivery?.formingUpdates ?? 0,
    files: delivery?.files ?? [],
    truncatedSeries,
    liveCycles,
  });
  const handle = control.handle(run());
  return {
    ...handle,
    add: (more) => {
      checkUniverse(more, klineTypes);
      if (signal.aborted)
        return Promise.reject(new PipelineError('QF_PIPELINE', 'klineSync: stopped, no codes can be added'));
      if (addToRun !== undefined) return addToRun(more);
      return new Promise<void>((resolve, reject) => waitingAdds.push({ more, resolve, reject }));
    },
    remove: (less) => {
      if (removeFromRun === undefined || signal.aborted)
        return Promise.reject(
          new PipelineError('QF_PIPELINE', 'klineSync: not running, no codes can be removed'),
        );
      return removeFromRun(less);
    },
  };
}
