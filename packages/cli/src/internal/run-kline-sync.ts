import { resolve } from 'node:path';
import {
  limitOverridesOf,
  planLimits,
  sustainedRate,
  systemClock,
  type BarUpdate,
  type Clock,
  type KlineType,
} from '@quoteflow/core';
import { ClusterWorker, syncGroupName, type WorkLease } from '@quoteflow/cluster';
import { estimatePlan, klineSync, type KlineSyncSummary } from '@quoteflow/pipelines';
import type { DatasetFormat } from '@quoteflow/sinks';
import type { CommandContext } from '../command-context.js';
import { CliMetrics, serveMetrics } from './cli-metrics.js';
import { checkCodesKnown } from './check-codes-known.js';
import { createClient } from './create-client.js';
import { RequestLog } from './request-log.js';
import { KlineProgress } from './kline-progress.js';
import { logClusterEvent } from './log-cluster-event.js';
import { checkKafka, cliKafkaSinkOptions } from './check-kafka.js';
import { describeSinks } from './stop-waits.js';
import { sinkConnectTimeoutMs } from './sink-connect-timeout.js';
import { StatusTicker, statusIntervalMs } from './status-ticker.js';
import type { ServiceOptions } from './service-options.js';

/** What `backfill` and `sync` hand to the K-line sync pipeline. */
export interface KlineRun {
  readonly service: ServiceOptions;
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  readonly bars: number;
  readonly out: string;
  readonly format: DatasetFormat;
  readonly live: boolean;
  readonly kafka?: { readonly brokers: string; readonly topicPrefix: string } | undefined;
  readonly statePath?: string | undefined;
  readonly durationS?: number | undefined;
  readonly metricsPort?: number | undefined;
  /** `--request-log`: every request into `out/_requests/` (quoteflow report draws it). */
  readonly requestLog?: boolean | undefined;
  readonly checkpointMs?: number | undefined;
  /** `--redis URL`: share the plan and the codes with the other workers of this sync (@quoteflow/cluster). */
  readonly redis?: string | undefined;
  /** Every bar update, for summaries. */
  readonly onUpdate?: ((update: BarUpdate) => void) | undefined;
  /** The clock of the client and the pipeline (the demo's accelerated one). @defaultValue the system clock */
  readonly clock?: Clock | undefined;
}

/** Runs the K-line sync pipeline with progress, metrics, `--duration` and SIGINT/SIGTERM handling. */
export async function runKlineSync(ctx: CommandContext, run: KlineRun): Promise<KlineSyncSummary> {
  const metrics = run.metricsPort === undefined ? undefined : new CliMetrics();
  metrics?.expectGaps(run.klineTypes);
  const worker =
    run.redis === undefined
      ? undefined
      : new ClusterWorker({
          redis: run.redis,
          token: run.service.token,
          limits: planLimits(run.service.plan, run.service.limits),
          group: syncGroupName(run.codes, run.klineTypes),
          onEvent: (e) => {
            logClusterEvent(ctx.logger, e);
            metrics?.onClusterEvent(e);
          },
        });
  const requestLog =
    run.requestLog === true
      ? await RequestLog.open(
          [resolve(ctx.io.cwd, run.out)],
          planLimits(run.service.plan, run.service.limits),
          (run.clock ?? systemClock).now(),
        )
      : undefined;
  const client = createClient(
    run.service,
    ctx.logger,
    metrics,
    worker?.scheduler,
    run.clock,
    requestLog?.record,
  );
  const estimate = estimatePlan(
    run.service.plan,
    { codes: run.codes, klineTypes: run.klineTypes, bars: run.bars },
    limitOverridesOf(client.limits),
  );
  const progress = new KlineProgress(ctx.stderr, ctx.logger, estimate.series, {
    requests: estimate.backfill.requests,
    ratePerSecond: sustainedRate(client.limits, 'kline'),
  });
  if (metrics !== undefined) await serveMetrics(metrics, client, run.metricsPort ?? 0, ctx.logger);
  if (run.live) {
    ctx.logger.info(
      {
        series: estimate.series,
        refreshPeriodMs: estimate.live.refreshPeriodMs,
        batchRequestsPerCycle: estimate.live.batchRequestsPerCycle,
        plan: run.service.plan,
      },
      'live refresh period from the plan',
    );
  }
  // On a terminal the progress bars show the state; elsewhere a status line now and then.
  const ticker = ctx.stderr.isTTY
    ? undefined
    : new StatusTicker(ctx.status, statusIntervalMs(ctx.io.env), () => progress.snapshot());
  const stopper = new AbortController();
  const onStop = (): void => stopper.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onStop();
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const timer =
    run.durationS === undefined
      ? undefined
      : setTimeout(() => stopper.abort(new Error('duration reached')), run.durationS * 1000);
  const flushing = ctx.stopWaits.duringStop(stopper.signal, describeSinks(run));
  try {
    // Kafka or Redis that does not answer fails the command (exit 1) within 30 s or the --duration,
    // before any request or file.
    if (run.kafka !== undefined)
      await checkKafka(run.kafka, {
        timeoutMs: sinkConnectTimeoutMs(run.durationS, ctx.io.env),
        signal: ctx.signal,
      });
    await worker?.connect({ timeoutMs: sinkConnectTimeoutMs(run.durationS, ctx.io.env), signal: ctx.signal });
    // A cluster worker joins first: with the shared /batch-kline interval not yet taken in turns,
    // a check before joining could wait behind the other workers' polls (seen: 14 s).
    if (worker === undefined) await checkCodesKnown(client, run.codes, run.klineTypes, stopper.signal);
    const start = (codes: readonly string[], lease?: WorkLease) =>
      klineSync({
        client,
        codes,
        klineTypes: run.klineTypes,
        bars: run.bars,
        // A cluster worker commits files only while it holds its lease.
        files: {
          dir: resolve(ctx.io.cwd, run.out),
          format: run.format,
          ...(lease && { fence: lease.valid }),
        },
        ...(run.kafka === undefined ? {} : { kafka: cliKafkaSinkOptions(run.kafka, ctx.io.env) }),
        // With --redis the shared dataset is the state (several processes must not rewrite one file).
        ...(run.statePath === undefined || worker !== undefined
          ? {}
          : { statePath: resolve(ctx.io.cwd, run.statePath) }),
        ...(run.checkpointMs === undefined ? {} : { checkpointMs: run.checkpointMs }),
        // A cluster worker polls at the whole universe's refresh period, not at its share's: the
        // workers then take the shared /batch-kline interval in turns (one worker at its share's
        // pace would win it more often and leave another's series waiting).
        ...(worker === undefined ? {} : { refreshPeriodMs: estimate.live.refreshPeriodMs }),
        live: run.live,
        signal: stopper.signal,
        onEvent: (e) => {
          progress.handle(e);
          if (metrics !== undefined) {
            if (e.type === 'checkpoint') for (const f of e.files) metrics.files.inc({ dataset: f.kind });
            if (e.type === 'gap') metrics.gaps.inc({ kline_type: String(e.klineType) });
            if (e.type === 'backfill-done' || e.type === 'live-cycle') metrics.markStarted();
          }
        },
        onUpdate: (u) => {
          if (metrics !== undefined) {
            metrics.onUpdate(u);
            if (u.final) metrics.records.inc({ sink: 'files', dataset: 'kline' });
            if (run.kafka !== undefined) metrics.records.inc({ sink: 'kafka', dataset: 'kline' });
          }
          run.onUpdate?.(u);
        },
      });
    const summary =
      worker === undefined
        ? await start(run.codes).done
        : mergeSummaries(await worker.share(run.codes, start, { signal: stopper.signal }).done);
    progress.stop();
    ctx.logger.info(
      {
        series: summary.series,
        closedBars: summary.closedBars,
        files: summary.files.length,
        liveCycles: summary.liveCycles,
      },
      run.live ? 'sync stopped: sinks flushed, state written' : 'backfill finished',
    );
    if (summary.truncatedSeries.length > 0) {
      ctx.logger.warn(
        { series: summary.truncatedSeries.slice(0, 20), count: summary.truncatedSeries.length },
        `the service cannot go back ${run.bars} bars for ${summary.truncatedSeries.length} series (stock codes reach only the latest page of 500; for others it has no older bars): wrote what exists`,
      );
    }
    return summary;
  } finally {
    progress.stop();
    ticker?.stop();
    flushing();
    if (timer !== undefined) clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onStop);
    await client.close();
    await requestLog?.close();
    await worker?.close();
    await metrics?.close();
  }
}

/** One summary for the runs of a cluster worker (a run restarts on every reassignment). */
function mergeSummaries(runs: readonly KlineSyncSummary[]): KlineSyncSummary {
  return {
    series: Math.max(0, ...runs.map((r) => r.series)),
    closedBars: runs.reduce((n, r) => n + r.closedBars, 0),
    formingUpdates: runs.reduce((n, r) => n + r.formingUpdates, 0),
    files: runs.flatMap((r) => r.files),
    truncatedSeries: [...new Set(runs.flatMap((r) => r.truncatedSeries))],
    liveCycles: runs.reduce((n, r) => n + r.liveCycles, 0),
  };
}
