import {
  estimatePlan,
  hasKlineType,
  isKlineType,
  klineHistory,
  pollLatestBatches,
  type Bar,
  type BarUpdate,
  type Clock,
  type GapMarker,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import {
  MERGE_BARS_DEFAULTS,
  MERGE_GAP_REASONS,
  mergeBars,
  seriesKey,
  type MergeBarsInput,
  type MergeBarsOutput,
} from '@quoteflow/operators';
import {
  DatasetWriter,
  KafkaSink,
  type DatasetFormat,
  type KafkaSinkOptions,
  type WrittenFile,
} from '@quoteflow/sinks';
import { Subject, retry, throwError, timer, type Subscription } from 'rxjs';
import { clockScheduler } from '@quoteflow/core';
import { collect } from './internal/collect.js';
import { delayOn } from './internal/delay-on.js';
import { isAbort, isFatal } from './internal/error-kinds.js';
import { listKlineFiles, readKlineMaxima } from './internal/read-kline-maxima.js';
import { runLimited } from './internal/run-limited.js';
import { settleAtMs } from './internal/settle-delay.js';
import { PipelineError } from './pipeline-error.js';
import { SyncState } from './sync-state.js';

/** Where closed bars go on disk. */
export interface KlineFilesOptions {
  /** Dataset directory (`DIR/kline/kline_type=K/…`). */
  readonly dir: string;
  /** @defaultValue `'parquet'` */
  readonly format?: DatasetFormat;
  /** A file is finished this long after its first row at the latest. @defaultValue 60,000 ms */
  readonly maxFileAgeMs?: number;
  /**
   * Worker threads that encode files (`DatasetWriter`'s `encoderThreads`). A live sync's files are
   * small (one row per series per bar period, finished at every checkpoint), so by default they are
   * encoded on the calling thread; a backfill-only run (`live: false`) checkpoints up to hundreds of
   * thousands of rows at once and uses one thread, so encoding never holds up its requests.
   * @defaultValue 0 with `live` (the default), 1 with `live: false`
   */
  readonly encoderThreads?: number;
}

/** Options of {@link klineSync}. */
export interface KlineSyncOptions {
  /** The client (its plan decides the refresh period; its scheduler paces every request). */
  readonly client: QuoteflowClient;
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  /** Closed bars of history per series on the first run. @defaultValue 100 */
  readonly bars?: number;
  /** Closed bars go to these dataset files, exactly once per (code, kline type, start). */
  readonly files?: KlineFilesOptions;
  /** Forming and closed bars go to `<prefix>.kline` (value `final: false|true`). */
  readonly kafka?: KafkaSinkOptions;
  /** State file: last closed bar per series; with it a restart backfills the gap first. */
  readonly statePath?: string;
  /** Keep the dataset current through `/batch-kline` after the backfill. @defaultValue true */
  readonly live?: boolean;
  /** How often every series is polled. @defaultValue the plan's refresh period (`estimatePlan`) */
  readonly refreshPeriodMs?: number;
  /** Files flushed and state written this often. @defaultValue 30,000 ms */
  readonly checkpointMs?: number;
  /**
   * A read this long after the calendar closed a bar's session proves its values final (see
   * `mergeBars`). @defaultValue 15,000 ms
   */
  readonly graceMs?: number;
  /**
   * A backfill-only run whose newest bar may have closed just before it was read (not proven final
   * yet) waits at most this long to read it again, so `bars` closed bars are the most recent ones
   * also across a bar boundary; a bar still forming when read is never waited for. @defaultValue 90,000 ms
   */
  readonly settleWaitMs?: number;
  /** Series backfilled at once (the scheduler paces the requests). @defaultValue 32 */
  readonly backfillConcurrency?: number;
  /** The clock of waits and timers. @defaultValue the client's clock */
  readonly clock?: Clock;
  /** Stops the pipeline like `stop()`. */
  readonly signal?: AbortSignal;
  /** Every bar update (forming `final: false`, closed `final: true`), for embedding in an analytics job. */
  readonly onUpdate?: (update: BarUpdate) => void;
  /** Progress and status events (for progress bars, logs and metrics). */
  readonly onEvent?: (event: KlineSyncEvent) => void;
}

/** Defaults of {@link KlineSyncOptions}. */
export const KLINE_SYNC_DEFAULTS = {
  bars: 100,
  checkpointMs: 30_000,
  backfillConcurrency: 32,
  settleWaitMs: 90_000,
  graceMs: MERGE_BARS_DEFAULTS.graceMs,
} as const;

/** What a running sync reports. */
export type KlineSyncEvent =
  | { readonly type: 'backfill-start'; readonly series: number }
  | {
      readonly type: 'backfill-progress';
      readonly code: string;
      readonly klineType: KlineType;
      readonly bars: number;
      readonly wanted: number;
    }
  | {
      readonly type: 'backfill-series-done';
      readonly code: string;
      readonly klineType: KlineType;
      readonly bars: number;
      readonly truncated: boolean;
    }
  | { readonly type: 'backfill-done'; readonly series: number; readonly durationMs: number }
  | {
      readonly type: 'live-cycle';
      readonly groups: number;
      readonly durationMs: number;
      readonly newestBarMs: number | undefined;
    }
  | {
      readonly type: 'gap';
      readonly code: string;
      readonly klineType: KlineType;
      readonly fromMs: number | undefined;
      readonly reason: string;
    }
  | { readonly type: 'checkpoint'; readonly files: readonly WrittenFile[]; readonly closedBars: number }
  | { readonly type: 'warning'; readonly message: string; readonly error?: unknown };

/** Counts of a sync so far. */
export interface KlineSyncSummary {
  readonly series: number;
  /** Closed bars written to files (or emitted, without files). */
  readonly closedBars: number;
  /** Forming-bar updates emitted. */
  readonly formingUpdates: number;
  readonly files: readonly WrittenFile[];
  /** Series whose history is shorter than asked because the class cannot page back (stocks). */
  readonly truncatedSeries: readonly string[];
  readonly liveCycles: number;
}

/** A running pipeline: `stop()` stops polling, flushes every sink, writes the state and resolves. */
export interface PipelineHandle<S> {
  /** Resolves when the pipeline has ended (after `stop()`, the signal, or the end of a backfill-only run). */
  readonly done: Promise<S>;
  /** Stops, flushes, writes state; idempotent; resolves like `done`. */
  stop(): Promise<S>;
}

interface SeriesState {
  readonly code: string;
  readonly klineType: KlineType;
  /** Newest bar start seen that is not final yet, and when its newest values were read. */
  newestPending: number | undefined;
  newestPendingReadAtMs: number;
  /** Newest bar start emitted final. */
  newestFinal: number | undefined;
  /** First-run backfill of N bars read N + 1: the oldest is held until the newest is known closed. */
  heldOldest: BarUpdate | undefined;
  heldOldestTs: number | undefined;
  newestAtBackfill: number | undefined;
  newestAtBackfillFinal: boolean;
  /** A re-read of history from this start is wanted (the earliest asked), or in flight. */
  rereadFromMs: number | undefined;
  rereading: boolean;
}

/**
 * K-line sync, the service's recommended usage done right, composed of the same public pieces a
 * user would compose: core's `klineHistory` (history through `/kline`, one pager) and
 * `pollLatestBatches` (`/batch-kline` at the plan's refresh period), the `mergeBars` operator
 * (finality from evidence, closed bars exactly once and in order), and the sinks' `DatasetWriter`
 * and `KafkaSink`.
 *
 * - First run: N closed bars of history per series, then live polling. A restart resumes from the
 *   dataset's newest closed bar per series (files are the truth; the state file is a checkpoint).
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
export function klineSync(options: KlineSyncOptions): PipelineHandle<KlineSyncSummary> {
  const { client, codes, klineTypes } = options;
  if (codes.length === 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', 'klineSync: "codes" must not be empty');
  if (klineTypes.length === 0 || !klineTypes.every(isKlineType)) {
    throw new PipelineError(
      'QF_PIPELINE_CONFIG',
      `klineSync: "klineTypes" must be kline types 1-10, got ${JSON.stringify(klineTypes)}`,
    );
  }
  for (const klineType of klineTypes) {
    const without = codes.filter((code) => !hasKlineType(code, klineType));
    if (without.length > 0)
      throw new PipelineError(
        'QF_PIPELINE_CONFIG',
        `klineSync: stock and index codes have no kline type ${klineType} (2-hour and 4-hour bars): ${without.slice(0, 5).join(', ')}`,
      );
  }
  const bars = options.bars ?? KLINE_SYNC_DEFAULTS.bars;
  if (!Number.isInteger(bars) || bars < 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', `klineSync: "bars" must be an integer >= 0, got ${bars}`);
  const clock = options.clock ?? client.clock;
  const refreshPeriodMs =
    options.refreshPeriodMs ??
    Math.max(
      1_000,
      estimatePlan(client.plan, { codes, klineTypes, bars }, client.limits).live.refreshPeriodMs,
    );
  const checkpointMs = options.checkpointMs ?? KLINE_SYNC_DEFAULTS.checkpointMs;
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

  const stopController = new AbortController();
  const signal = stopController.signal;
  const onOuterAbort = (): void => stopController.abort(options.signal?.reason);
  if (options.signal?.aborted === true) stopController.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const series = new Map<string, SeriesState>();
  for (const code of codes)
    for (const klineType of klineTypes)
      series.set(seriesKey(code, klineType), {
        code,
        klineType,
        newestPending: undefined,
        newestPendingReadAtMs: 0,
        newestFinal: undefined,
        heldOldest: undefined,
        heldOldestTs: undefined,
        newestAtBackfill: undefined,
        newestAtBackfillFinal: false,
        rereadFromMs: undefined,
        rereading: false,
      });

  let closedBars = 0;
  let formingUpdates = 0;
  let liveCycles = 0;
  const truncatedSeries: string[] = [];
  const allFiles: WrittenFile[] = [];
  /** Newest closed start per series appended to the writer since the last checkpoint. */
  const pendingMarks = new Map<string, [code: string, klineType: KlineType, tsMs: number]>();
  const kafkaInFlight = new Set<Promise<void>>();
  let kafkaError: unknown;

  const run = async (): Promise<KlineSyncSummary> => {
    const state = options.statePath === undefined ? new SyncState() : await SyncState.load(options.statePath);
    if (options.files !== undefined) await reconcile(state, options.files.dir);
    const writer =
      options.files === undefined
        ? undefined
        : new DatasetWriter({
            dir: options.files.dir,
            format: options.files.format ?? 'parquet',
            encoderThreads: options.files.encoderThreads ?? (live ? 0 : 1),
            ...(options.files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: options.files.maxFileAgeMs }),
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    const lastClosed = new Map<string, number>();
    for (const s of series.values()) {
      const ts = state.lastClosed(s.code, s.klineType);
      if (ts !== undefined) lastClosed.set(seriesKey(s.code, s.klineType), ts);
    }

    let failure: unknown;
    const fail = (err: unknown): void => {
      failure ??= err;
      stopController.abort(err);
    };

    /** Closed bars to the files (and the state once durable), every update to Kafka and the caller. */
    const deliver = (u: BarUpdate): void => {
      if (u.final) {
        closedBars++;
        if (writer !== undefined) {
          writer.append(u);
          pendingMarks.set(seriesKey(u.code, u.klineType), [u.code, u.klineType, u.tsMs]);
        } else {
          state.advance(u.code, u.klineType, u.tsMs);
        }
      } else {
        formingUpdates++;
      }
      if (kafka !== undefined) {
        const p = kafka.write(u).catch((err: unknown) => {
          kafkaError ??= err;
        });
        kafkaInFlight.add(p);
        void p.finally(() => kafkaInFlight.delete(p));
      }
      try {
        options.onUpdate?.(u);
      } catch (err) {
        emitEvent({ type: 'warning', message: 'onUpdate threw', error: err });
      }
    };

    const onOutput = (out: MergeBarsOutput): void => {
      if (out.type === 'gap') {
        onGap(out);
        return;
      }
      const s = series.get(seriesKey(out.code, out.klineType));
      if (s === undefined) return;
      if (!out.final) {
        if (s.newestPending === undefined || out.tsMs >= s.newestPending) {
          s.newestPending = out.tsMs;
          s.newestPendingReadAtMs = out.readAtMs;
        }
        deliver(out);
        return;
      }
      if (s.newestPending !== undefined && out.tsMs >= s.newestPending) s.newestPending = undefined;
      if (s.newestFinal === undefined || out.tsMs > s.newestFinal) s.newestFinal = out.tsMs;
      if (out.tsMs === s.newestAtBackfill) s.newestAtBackfillFinal = true;
      if (!live && s.newestAtBackfill !== undefined) {
        // Exactly the N newest closed bars of the backfill: bars that closed after it are left to
        // the next run, and the oldest of the N + 1 read waits until the newest is known closed.
        if (out.tsMs > s.newestAtBackfill) return;
        if (out.tsMs === s.heldOldestTs) {
          s.heldOldest = out;
          return;
        }
      }
      deliver(out);
    };
    const onGap = (gap: GapMarker): void => {
      const klineType = gap.klineType ?? klineTypes[0]!;
      const s = series.get(seriesKey(gap.code, klineType));
      const ours =
        gap.reason === MERGE_GAP_REASONS.unconfirmed || gap.reason === MERGE_GAP_REASONS.missingBars;
      if (ours && s !== undefined && gap.fromMs !== undefined) requestReread(s, gap.fromMs);
      if (gap.reason !== MERGE_GAP_REASONS.unconfirmed)
        emitEvent({ type: 'gap', code: gap.code, klineType, fromMs: gap.fromMs, reason: gap.reason });
    };

    // The one execution path: every answer of the service goes through mergeBars, in arrival order.
    const input$ = new Subject<MergeBarsInput>();
    const output = input$
      .pipe(
        mergeBars({
          graceMs,
          lastClosed,
          onReport: (r) => emitEvent({ type: 'warning', message: `bar dropped or corrected: ${r.message}` }),
        }),
      )
      .subscribe({ next: onOutput, error: fail });
    const push = (input: MergeBarsInput): void => {
      if (!signal.aborted || failure === undefined) input$.next(input);
    };

    /** History of one series from `startMs` (a re-read) or its N + 1 newest bars, into the merger. */
    const readHistory = async (
      s: SeriesState,
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
      const got: Bar[] = [];
      for (const item of items) {
        if (item.type === 'gap') {
          if (!truncatedSeries.includes(`${s.code}:${s.klineType}`))
            truncatedSeries.push(`${s.code}:${s.klineType}`);
          emitEvent({
            type: 'gap',
            code: s.code,
            klineType: s.klineType,
            fromMs: item.fromMs,
            reason: item.reason,
          });
          push(item);
        } else got.push(item);
      }
      beforePush?.(got);
      if (got.length > 0) push(got);
      return got;
    };

    const requestReread = (s: SeriesState, fromMs: number): void => {
      s.rereadFromMs = Math.min(s.rereadFromMs ?? fromMs, fromMs);
      if (s.rereading) return;
      s.rereading = true;
      const loop = async (): Promise<void> => {
        while (s.rereadFromMs !== undefined && !signal.aborted) {
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

    const checkpoint = async (): Promise<void> => {
      const marks = [...pendingMarks.values()];
      pendingMarks.clear();
      const files = writer === undefined ? [] : await writer.flush();
      if (kafka !== undefined) {
        await kafka.flush();
        if (kafkaError !== undefined)
          throw new PipelineError('QF_PIPELINE', 'klineSync: Kafka delivery failed', { cause: kafkaError });
      }
      for (const [code, klineType, tsMs] of marks) state.advance(code, klineType, tsMs);
      for (const f of files) {
        state.addFile(f.relativePath);
        allFiles.push(f);
      }
      if (options.statePath !== undefined) await state.save(options.statePath);
      emitEvent({ type: 'checkpoint', files, closedBars });
    };
    let checkpointChain: Promise<void> = Promise.resolve();
    let checkpointTimer: unknown;
    const armCheckpoint = (): void => {
      checkpointTimer = clock.setTimeout(() => {
        checkpointChain = checkpointChain.then(checkpoint).then(armCheckpoint, fail);
      }, checkpointMs);
    };

    const backfillSeries = async (s: SeriesState): Promise<void> => {
      const resumeMs = state.lastClosed(s.code, s.klineType);
      if (resumeMs === undefined && bars === 0) return;
      const wanted = resumeMs === undefined ? bars + 1 : undefined;
      const got = await readHistory(
        s,
        wanted === undefined ? { startMs: resumeMs! } : { bars: wanted },
        (history) => {
          if (wanted === undefined || history.length !== wanted) return;
          // N + 1 bars: the newest may still be forming. The oldest waits until that is known.
          s.heldOldestTs = history[0]!.tsMs;
          s.newestAtBackfill = history.at(-1)!.tsMs;
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
        bars: Math.min(got.length, bars),
        truncated: truncatedSeries.includes(`${s.code}:${s.klineType}`),
      });
    };

    /**
     * Backfill-only: the newest bar of a series may have closed just before it was read (its end
     * passed, no newer bar yet): read it again once that can prove it, so the N bars are the N most
     * recent closed ones. A bar that was still forming when read is not waited for.
     */
    const settle = async (): Promise<void> => {
      const due: [SeriesState, number, number][] = [];
      for (const s of series.values()) {
        if (s.newestPending === undefined) continue;
        const at = settleAtMs(s.newestPending, s.newestPendingReadAtMs, s.code, s.klineType, graceMs);
        if (at !== undefined && at - clock.now() <= settleWaitMs) due.push([s, s.newestPending, at]);
      }
      await runLimited(
        due,
        options.backfillConcurrency ?? KLINE_SYNC_DEFAULTS.backfillConcurrency,
        async ([s, target, at]) => {
          await delayOn(clock, at - clock.now(), signal);
          if (!signal.aborted && (s.newestFinal === undefined || s.newestFinal < target))
            await readHistory(s, { startMs: target });
        },
        signal,
      );
    };

    let live$: Subscription | undefined;
    try {
      const startedAt = clock.now();
      emitEvent({ type: 'backfill-start', series: series.size });
      if (checkpointMs > 0) armCheckpoint();
      await runLimited(
        [...series.values()],
        options.backfillConcurrency ?? KLINE_SYNC_DEFAULTS.backfillConcurrency,
        backfillSeries,
        signal,
      );
      if (!signal.aborted)
        emitEvent({ type: 'backfill-done', series: series.size, durationMs: clock.now() - startedAt });
      if (live && !signal.aborted) {
        const groups = [...series.values()].map((s) => ({
          code: s.code,
          klineType: s.klineType,
          count: 2 as const,
        }));
        live$ = pollLatestBatches(client, {
          groups,
          intervalMs: refreshPeriodMs,
          sourceId: 'kline-sync-live',
          scheduler: clockScheduler(clock),
        })
          .pipe(
            retry({
              resetOnSuccess: true,
              delay: (err: unknown) => {
                if (isFatal(err)) return throwError(() => err);
                emitEvent({ type: 'warning', message: 'live poll failed; retrying next cycle', error: err });
                return timer(refreshPeriodMs, clockScheduler(clock));
              },
            }),
          )
          .subscribe({
            next: (batch) => {
              let newestBarMs: number | undefined;
              const latest: Bar[] = [];
              for (const r of batch.results) for (const b of r.bars) latest.push(b);
              for (const b of latest)
                if (newestBarMs === undefined || b.tsMs > newestBarMs) newestBarMs = b.tsMs;
              push(latest);
              if (batch.lastOfCycle) {
                liveCycles++;
                emitEvent({
                  type: 'live-cycle',
                  groups: groups.length,
                  durationMs: batch.cycleDurationMs,
                  newestBarMs,
                });
              }
            },
            error: fail,
          });
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
          if (s.heldOldest !== undefined && !s.newestAtBackfillFinal) deliver(s.heldOldest);
        }
      }
    } catch (err) {
      if (!signal.aborted || failure === undefined) failure ??= err;
    } finally {
      live$?.unsubscribe();
      if (checkpointTimer !== undefined) clock.clearTimeout(checkpointTimer);
      options.signal?.removeEventListener('abort', onOuterAbort);
      await Promise.allSettled([...rereads]);
      input$.complete();
      output.unsubscribe();
      try {
        await checkpointChain;
        await checkpoint();
      } catch (err) {
        failure ??= err;
      }
      await writer?.close().catch((err: unknown) => {
        failure ??= err;
      });
      await Promise.allSettled([...kafkaInFlight]);
      await kafka?.close().catch((err: unknown) => {
        failure ??= err;
      });
    }
    // A stop (signal) is a normal end; an error that caused the stop is not.
    if (failure !== undefined && !isAbort(failure, signal)) throw failure;
    return summary();
  };

  const summary = (): KlineSyncSummary => ({
    series: series.size,
    closedBars,
    formingUpdates,
    files: allFiles,
    truncatedSeries,
    liveCycles,
  });
  const done = run();
  done.catch(() => undefined); // handled by whoever awaits done/stop()
  return {
    done,
    stop: () => {
      stopController.abort(new Error('stopped'));
      return done;
    },
  };
}

/** Accounts for dataset files that landed after the last state checkpoint (a crash in between). */
async function reconcile(state: SyncState, dir: string): Promise<void> {
  for (const rel of await listKlineFiles(dir)) {
    if (state.hasFile(rel)) continue;
    const { klineType, maxima } = await readKlineMaxima(dir, rel);
    if (!isKlineType(klineType)) continue;
    for (const [code, tsMs] of maxima) state.advance(code, klineType, tsMs);
    state.addFile(rel);
  }
}
