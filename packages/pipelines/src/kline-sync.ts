import {
  barPeriodAt,
  calendarOf,
  estimatePlan,
  isKlineType,
  type Bar,
  type BatchKlineGroupResult,
  type BarUpdate,
  type GapMarker,
  type KlineType,
  type QuoteflowClient,
} from '@quoteflow/core';
import { createBarMerger, seriesKey, type MergeBarsOutput } from '@quoteflow/operators';
import {
  DatasetWriter,
  KafkaSink,
  type DatasetFormat,
  type KafkaSinkOptions,
  type WrittenFile,
} from '@quoteflow/sinks';
import { abortableDelay } from './internal/abortable-delay.js';
import { fetchKlineHistory } from './internal/fetch-kline-history.js';
import { runLimited } from './internal/run-limited.js';
import { listKlineFiles, readKlineMaxima } from './internal/read-kline-maxima.js';
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
   * encoded on the calling thread: a few ms per checkpoint, and no second V8 isolate with its own
   * copy of the Parquet encoder (measured: ~60 MB less RSS for 10,000 series). A backfill-only run
   * (`live: false`) checkpoints up to hundreds of thousands of rows at once and uses one thread, so
   * encoding never holds up its requests. A live sync with a long first backfill may want 1 too.
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
  /** A forming bar is closed this long after its period ended if no newer bar appeared. @defaultValue 2 × refresh + 15 s */
  readonly graceMs?: number;
  /** Series backfilled at once (the scheduler paces the requests). @defaultValue 32 */
  readonly backfillConcurrency?: number;
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
  maxResumeBars: 50_000,
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
  /** Newest bar start pushed into the merger (closed or forming). */
  lastSeenMs: number | undefined;
  /** True while history is being fetched: live results are skipped (never pushed out of order). */
  backfilling: boolean;
}

/**
 * K-line sync, the service's recommended usage done right: history through `/kline` at backfill
 * priority (N bars, or from the state file's last closed bar after a restart), then the latest
 * bars of every series through `/batch-kline` at the plan's refresh period, groups packed to the
 * plan's cap; bars merged (`mergeBars`), closed bars to files exactly once, forming and closed
 * bars to Kafka. When live polling finds that bars were skipped (an outage, a slow cycle), that
 * series is backfilled through `/kline` before its live bars are taken again, so the dataset has
 * no gap and no duplicate, also across restarts: dataset files are the truth, the state file a
 * checkpoint of them (files that landed after the last checkpoint are read back on start).
 *
 * @example
 * ```ts
 * const sync = klineSync({ client, codes: ['BTCUSDT', 'AAPL.US'], klineTypes: [1], files: { dir: './data' }, statePath: './data/state.json' });
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
  const bars = options.bars ?? KLINE_SYNC_DEFAULTS.bars;
  if (!Number.isInteger(bars) || bars < 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', `klineSync: "bars" must be an integer >= 0, got ${bars}`);
  const refreshPeriodMs =
    options.refreshPeriodMs ??
    Math.max(
      1_000,
      estimatePlan(client.plan, { codes, klineTypes, bars }, client.limits).live.refreshPeriodMs,
    );
  const checkpointMs = options.checkpointMs ?? KLINE_SYNC_DEFAULTS.checkpointMs;
  const graceMs = options.graceMs ?? 2 * refreshPeriodMs + 15_000;
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
      series.set(seriesKey(code, klineType), { code, klineType, lastSeenMs: undefined, backfilling: true });
  const groups = [...series.values()].map((s) => ({
    code: s.code,
    klineType: s.klineType,
    count: 2 as const,
  }));
  // One /batch-kline request per chunk: one family each, packed to the plan's group cap.
  const chunks: (typeof groups)[] = [];
  for (const family of ['stock', 'general'] as const) {
    const mine = groups.filter((g) => client.familyOf(g.code) === family);
    const cap = client.limits.batchKlineGroups;
    for (let i = 0; i < mine.length; i += cap) chunks.push(mine.slice(i, i + cap));
  }

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
    const merger = createBarMerger({
      graceMs,
      lastClosed,
      onReport: (r) =>
        emitEvent({ type: 'warning', message: `bar dropped or corrected: ${JSON.stringify(r)}` }),
    });

    const emit = (out: MergeBarsOutput): void => {
      if (out.type === 'gap') {
        onGap(out);
        return;
      }
      const key = seriesKey(out.code, out.klineType);
      if (out.final) {
        closedBars++;
        if (writer !== undefined) {
          writer.append(out);
          pendingMarks.set(key, [out.code, out.klineType, out.tsMs]);
        } else {
          state.advance(out.code, out.klineType, out.tsMs);
        }
      } else {
        formingUpdates++;
      }
      if (kafka !== undefined) {
        const p = kafka.write(out).catch((err: unknown) => {
          kafkaError ??= err;
        });
        kafkaInFlight.add(p);
        void p.finally(() => kafkaInFlight.delete(p));
      }
      try {
        options.onUpdate?.(out);
      } catch (err) {
        emitEvent({ type: 'warning', message: 'onUpdate threw', error: err });
      }
    };
    const onGap = (gap: GapMarker): void => {
      emitEvent({
        type: 'gap',
        code: gap.code,
        klineType: gap.klineType ?? klineTypes[0]!,
        fromMs: gap.fromMs,
        reason: gap.reason,
      });
    };

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

    /** History of one series from its resume point (or N bars), pushed into the merger in order. */
    const backfillSeries = async (s: SeriesState): Promise<void> => {
      s.backfilling = true;
      const key = seriesKey(s.code, s.klineType);
      const resumeMs = merger.lastClosed().get(key) ?? state.lastClosed(s.code, s.klineType);
      const wanted = resumeMs === undefined ? bars + 1 : KLINE_SYNC_DEFAULTS.maxResumeBars;
      if (resumeMs === undefined && bars === 0) {
        s.backfilling = false;
        return;
      }
      const result = await fetchKlineHistory(client, {
        code: s.code,
        klineType: s.klineType,
        count: wanted,
        afterMs: resumeMs,
        priority: 'backfill',
        signal,
        onPage: (n) =>
          emitEvent({ type: 'backfill-progress', code: s.code, klineType: s.klineType, bars: n, wanted }),
      });
      let fresh = result.bars.filter((b) => resumeMs === undefined || b.tsMs > resumeMs);
      if (resumeMs === undefined && fresh.length > bars) {
        // N closed bars: the newest one counts only if its period is over (the merger's rule).
        const newest = fresh.at(-1)!;
        const period = barPeriodAt(newest.tsMs, s.klineType, calendarOf(s.code));
        const newestClosed = period !== undefined && period.endMs + graceMs <= Date.now();
        fresh = fresh.slice(fresh.length - bars - (newestClosed ? 0 : 1));
      }
      if (result.truncated) {
        truncatedSeries.push(`${s.code}:${s.klineType}`);
        if (resumeMs !== undefined && fresh.length > 0) {
          emitGapIfAny(s, resumeMs, fresh);
        }
      }
      if (fresh.length > 0) {
        merger.push(fresh, Date.now(), emit);
        s.lastSeenMs = Math.max(s.lastSeenMs ?? -Infinity, fresh.at(-1)!.tsMs);
      }
      s.backfilling = false;
      emitEvent({
        type: 'backfill-series-done',
        code: s.code,
        klineType: s.klineType,
        bars: Math.max(0, fresh.length - 1),
        truncated: result.truncated,
      });
    };
    const emitGapIfAny = (s: SeriesState, resumeMs: number, fresh: readonly Bar[]): void => {
      emitEvent({
        type: 'gap',
        code: s.code,
        klineType: s.klineType,
        fromMs: resumeMs,
        reason: `the service cannot page back for ${s.code}: bars between the last closed one and ${new Date(fresh[0]!.tsMs).toISOString()} may be missing`,
      });
    };

    let failure: unknown;
    let timer: NodeJS.Timeout | undefined;
    try {
      const startedAt = Date.now();
      emitEvent({ type: 'backfill-start', series: series.size });
      if (checkpointMs > 0) {
        timer = setInterval(() => {
          checkpointChain = checkpointChain.then(checkpoint).catch((err: unknown) => {
            failure ??= err;
            stopController.abort(err);
          });
        }, checkpointMs);
      }
      await runLimited(
        [...series.values()],
        options.backfillConcurrency ?? KLINE_SYNC_DEFAULTS.backfillConcurrency,
        backfillSeries,
        signal,
      );
      if (!signal.aborted)
        emitEvent({ type: 'backfill-done', series: series.size, durationMs: Date.now() - startedAt });

      const resumes = new Set<Promise<void>>();
      while (live && !signal.aborted) {
        const cycleStart = Date.now();
        let newestBarMs: number | undefined;
        try {
          // Each request's groups are merged as soon as it answers (not after the whole cycle), so a
          // bar's freshness is bounded by the refresh period, not by the cycle's last response.
          const handle = (results: readonly BatchKlineGroupResult[]): void => {
            const nowMs = Date.now();
            for (const r of results) {
              const s = series.get(seriesKey(r.code, r.klineType));
              if (s === undefined || s.backfilling || r.bars.length === 0) continue;
              const sortedBars = [...r.bars].sort((a, b) => a.tsMs - b.tsMs);
              const oldest = sortedBars[0]!;
              newestBarMs = Math.max(newestBarMs ?? -Infinity, sortedBars.at(-1)!.tsMs);
              if (s.lastSeenMs !== undefined && oldest.tsMs > s.lastSeenMs) {
                // Bars were skipped since the last look (an outage or a slow cycle): the last bar seen
                // never got its final values. Take this series' history first, then its live bars again.
                emitEvent({
                  type: 'gap',
                  code: s.code,
                  klineType: s.klineType,
                  fromMs: s.lastSeenMs,
                  reason: 'bars skipped between polls; backfilling',
                });
                s.backfilling = true;
                const p = backfillSeries(s).catch((err: unknown) => {
                  s.backfilling = false;
                  if (!signal.aborted)
                    emitEvent({
                      type: 'warning',
                      message: `backfill of ${s.code}:${s.klineType} failed; retried next cycle`,
                      error: err,
                    });
                });
                resumes.add(p);
                void p.finally(() => resumes.delete(p));
                continue;
              }
              merger.push(sortedBars, nowMs, emit);
              s.lastSeenMs = Math.max(s.lastSeenMs ?? -Infinity, sortedBars.at(-1)!.tsMs);
            }
            merger.expire(nowMs, emit);
          };
          const outcomes = await Promise.allSettled(
            chunks.map((chunk) =>
              client
                .batchKline(chunk, { priority: 'live', signal, sourceId: 'kline-sync-live' })
                .then(handle),
            ),
          );
          const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
          if (failed !== undefined) throw failed.reason;
          liveCycles++;
          emitEvent({
            type: 'live-cycle',
            groups: groups.length,
            durationMs: Date.now() - cycleStart,
            newestBarMs,
          });
        } catch (err) {
          if (signal.aborted) break;
          if (isFatal(err)) throw err;
          emitEvent({ type: 'warning', message: 'live poll failed; retrying next cycle', error: err });
        }
        await abortableDelay(Math.max(0, refreshPeriodMs - (Date.now() - cycleStart)), signal);
      }
      await Promise.allSettled([...resumes]);
    } catch (err) {
      if (!signal.aborted || failure === undefined) failure = err;
    } finally {
      if (timer !== undefined) clearInterval(timer);
      options.signal?.removeEventListener('abort', onOuterAbort);
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
  let checkpointChain: Promise<void> = Promise.resolve();

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

/** Errors that polling again cannot fix: a refused token, an unknown code, bad options. */
function isFatal(err: unknown): boolean {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return (
    code === 'QF_UNAUTHORIZED_TOKEN' ||
    code === 'QF_INVALID_CODE' ||
    code === 'QF_UNAUTHORIZED_CODE' ||
    code === 'QF_INVALID_OPTION' ||
    code === 'QF_TOO_MANY_PRODUCTS' ||
    code === 'QF_BAD_REQUEST'
  );
}

function isAbort(err: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  if (err === signal.reason) return true;
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return code === 'QF_ABORTED' || (err instanceof Error && err.name === 'AbortError');
}
