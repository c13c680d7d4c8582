import { UsageError } from './usage-error.js';
import { datasetDir } from './check-out-dir.js';
import { ifOwnedOf, klineSeriesOf } from './table-writers.js';
import { resolve } from 'node:path';
import { type BarUpdate, type Clock, type KlineType } from '@quoteflow/core';
import { limitOverridesOf, sustainedRate } from '@quoteflow/core/internal';
import { syncGroupName } from '@quoteflow/cluster';
import { estimatePlan, klineSync, type KlineSyncSummary, type PipelineHandle } from '@quoteflow/pipelines';
import type { DatasetFormat, TableUpkeepOptions } from '@quoteflow/sinks';
import type { CommandContext } from '../command-context.js';
import { CommandRun } from './command-run.js';
import { KlineProgress } from './kline-progress.js';
import { Shortfalls } from './shortfalls.js';
import { describeSinks } from './stop-waits.js';
import { StatusTicker, statusIntervalMs } from './status-ticker.js';
import type { ServiceOptions } from './service-options.js';
import type { CliKafkaOptions } from './check-kafka.js';

/** What `backfill` and `sync` hand to the K-line sync pipeline. */
export interface KlineRun {
  readonly service: ServiceOptions;
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  readonly bars: number;
  readonly out: string;
  readonly format: DatasetFormat;
  readonly live: boolean;
  readonly kafka?: CliKafkaOptions | undefined;
  readonly statePath?: string | undefined;
  readonly durationS?: number | undefined;
  /**
   * Whether a backfill cut short by `--duration` fails the command (exit 1). @defaultValue false:
   * the contract's `sync` exits 0 at `--duration`; the shortfall is said on stderr either way.
   */
  readonly cutShortFails?: boolean | undefined;
  /** `--retry-budget`: seconds a failing request is retried (with backoff) before the run fails. */
  readonly retryBudgetS?: number | undefined;
  readonly metricsPort?: number | undefined;
  /** `--request-log`: every request into `out/_requests/` (quoteflow report draws it). */
  readonly requestLog?: boolean | undefined;
  readonly checkpointMs?: number | undefined;
  /** `--no-upkeep`, `--upkeep-*`: the dataset's table upkeep (`false` off, `undefined` the defaults). */
  readonly upkeep?: false | TableUpkeepOptions | undefined;
  /** `--redis URL`: share the plan and the codes with the other workers of this sync (@quoteflow/cluster). */
  readonly redis?: string | undefined;
  /** Every bar update, for summaries. */
  readonly onUpdate?: ((update: BarUpdate) => void) | undefined;
  /** The clock of the client and the pipeline (the demo's accelerated one). @defaultValue the system clock */
  readonly clock?: Clock | undefined;
  /** `--wait-for-writer`: wait for another live writer of the series instead of failing. */
  readonly waitForWriter?: boolean | undefined;
}

/** Runs the K-line sync pipeline with progress, metrics, `--duration` and SIGINT/SIGTERM handling. */
export async function runKlineSync(ctx: CommandContext, run: KlineRun): Promise<KlineSyncSummary> {
  const command = await CommandRun.start(ctx, {
    service: run.service,
    durationS: run.durationS,
    retryBudgetS: run.retryBudgetS,
    metricsPort: run.metricsPort,
    ...(run.redis === undefined
      ? {}
      : { redis: { url: run.redis, group: syncGroupName(run.codes, run.klineTypes) } }),
    ...(run.requestLog === true ? { requestLogDirs: [requestLogDir(ctx.io.cwd, run.out)] } : {}),
    clock: run.clock,
    sinks: describeSinks(run),
  });
  const { metrics } = command;
  metrics?.expectGaps(run.klineTypes);
  const { progress, ticker } = startProgress(ctx, run, command);
  const handles: PipelineHandle<unknown>[] = [];
  const shortfalls = new Shortfalls(ctx.logger);
  try {
    await command.preflight({
      tables: [
        {
          dir: datasetDir(ctx.io.cwd, run.out),
          dataset: 'kline',
          series: klineSeriesOf(run.codes, run.klineTypes),
          ifOwned: ifOwnedOf(run.waitForWriter, false),
        },
      ],
      kafka: kafkaChecks(run.kafka),
      klines: [run],
    });
    const step = await command.kafkaDelivery(
      { ...run, command: run.live ? 'quoteflow sync' : 'quoteflow backfill' },
      '--kafka',
    );
    const handle = command.shareKlines(step, (codes, lease) =>
      klineSync({
        ...command.klineSyncOptions(step, codes, lease),
        onEvent: (e) => {
          shortfalls.note(e);
          progress.handle(e);
          metrics?.onKlineEvent(e);
        },
        onUpdate: (u) => {
          if (u.final) progress.closedBar();
          metrics?.onKlineUpdate(u, run.kafka !== undefined);
          run.onUpdate?.(u);
        },
      }),
    );
    handles.push(handle);
    const [result] = await command.all([handle]).catch((err: unknown) => {
      progress.stop();
      shortfalls.report('failed');
      throw err;
    });
    const summary = Array.isArray(result) ? mergeSummaries(result) : (result as KlineSyncSummary);
    progress.stop();
    reportSummary(ctx, run, summary, shortfalls.count > 0);
    shortfalls.report(command.stoppedByDuration ? 'duration' : 'stopped', run.cutShortFails === true);
    return summary;
  } finally {
    progress.stop();
    ticker?.stop();
    await command.close(handles);
  }
}

/** The run's progress: bars on a terminal (pages as answered), else a status line now and then. */
function startProgress(ctx: CommandContext, run: KlineRun, command: CommandRun) {
  const { client } = command;
  const estimate = estimatePlan(
    run.service.plan,
    { codes: run.codes, klineTypes: run.klineTypes, bars: run.bars },
    limitOverridesOf(client.limits),
  );
  const progress = new KlineProgress(
    ctx.stderr,
    ctx.logger,
    run,
    { requests: estimate.backfill.requests, ratePerSecond: sustainedRate(client.limits, 'kline') },
    client.clock,
    ctx.progressBars(),
  );
  if (run.live)
    ctx.logger.info(
      {
        series: estimate.series,
        refreshPeriodMs: estimate.live.refreshPeriodMs,
        batchRequestsPerCycle: estimate.live.batchRequestsPerCycle,
        plan: run.service.plan,
      },
      'live refresh period from the plan',
    );
  // A cluster worker counts the series it holds: none until its first assignment.
  const worker = command.worker;
  if (worker !== undefined) {
    progress.hold(worker.workerId, []);
    command.watchCluster((e) => {
      if (e.type === 'assignment') progress.hold(worker.workerId, e.held);
    });
  }
  // With progress bars they show the state; elsewhere a status line now and then.
  const ticker = ctx.progressBars()
    ? undefined
    : new StatusTicker(ctx.status, statusIntervalMs(ctx.io.env), () => progress.snapshot());
  // The overall bar counts /kline pages as they are answered: the pipeline hears of a series
  // only once all its pages are in.
  command.watchRequests((r) => {
    if (r.endpoint === 'kline' && r.outcome === 'ok') progress.page();
  });
  return { progress, ticker };
}

/** The end of a sync or backfill on stderr: what it did, and what the service could not give. */
function reportSummary(
  ctx: CommandContext,
  run: KlineRun,
  summary: KlineSyncSummary,
  cutShort: boolean,
): void {
  ctx.logger.info(
    {
      series: summary.series,
      closedBars: summary.closedBars,
      files: summary.fileCount,
      liveCycles: summary.liveCycles,
    },
    cutShort
      ? 'stopped before the backfill completed: what was read is committed'
      : run.live
        ? 'sync stopped: sinks flushed, state written'
        : 'backfill finished',
  );
  if (summary.truncatedSeries.length > 0) {
    ctx.logger.warn(
      { series: summary.truncatedSeries.slice(0, 20), count: summary.truncatedSeries.length },
      `the service cannot go back ${run.bars} bars for ${summary.truncatedSeries.length} series (codes other than forex, precious metals and crypto reach only the latest page of 500; for those it has no older bars): wrote what exists`,
    );
  }
}

/** One summary for the runs of a cluster worker (a run restarts on every reassignment). */
function mergeSummaries(runs: readonly KlineSyncSummary[]): KlineSyncSummary {
  return {
    series: Math.max(0, ...runs.map((r) => r.series)),
    closedBars: runs.reduce((n, r) => n + r.closedBars, 0),
    formingUpdates: runs.reduce((n, r) => n + r.formingUpdates, 0),
    files: runs.flatMap((r) => r.files),
    fileCount: runs.reduce((n, r) => n + r.fileCount, 0),
    truncatedSeries: [...new Set(runs.flatMap((r) => r.truncatedSeries))],
    // A worker's earlier run handed its series on: only the last run's shortfalls are still open.
    incompleteSeries: runs.at(-1)?.incompleteSeries ?? [],
    droppedCodes: [...new Set(runs.flatMap((r) => r.droppedCodes))],
    repairs: runs.flatMap((r) => r.repairs),
    liveCycles: runs.reduce((n, r) => n + r.liveCycles, 0),
  };
}

/** The Kafka check of a K-line sync: its topic, and its watermark topic unless at least once. */
function kafkaChecks(kafka: CliKafkaOptions | undefined) {
  return kafka === undefined
    ? []
    : [
        {
          kafka,
          flag: '--kafka',
          topics: ['kline'] as const,
          watermarks: kafka.delivery !== 'at-least-once',
        },
      ];
}

/** `--request-log` writes `DIR/_requests/`: a local directory only. */
function requestLogDir(cwd: string, out: string): string {
  if (/^s3:\/\//i.test(out))
    throw new UsageError(
      `--request-log writes beside a local dataset, not into ${out}: drop it or give a local --out`,
    );
  return resolve(cwd, out);
}
