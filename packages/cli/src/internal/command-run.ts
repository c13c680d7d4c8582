import { datasetDir } from './check-out-dir.js';
import { resolve } from 'node:path';
import {
  planLimits,
  systemClock,
  type Clock,
  type KlineType,
  type QuoteflowClient,
  type RequestRecord,
} from '@quoteflow/core';
import { AbortedError } from '@quoteflow/core/internal';
import {
  ClusterWorker,
  batchKlineUnits,
  type ClusterSyncEvent,
  type RedisQuotaEvent,
  type WorkLease,
} from '@quoteflow/cluster';
import { type KlineSyncOptions, type PipelineHandle } from '@quoteflow/pipelines';
import { SyncState } from '@quoteflow/pipelines/internal';
import type { DatasetFormat, KafkaTopicKind, TableUpkeepOptions } from '@quoteflow/sinks';
import type { CommandContext } from '../command-context.js';
import { checkCodesKnown } from './check-codes-known.js';
import { checkKafka, cliKafkaSinkOptions, type CliKafkaOptions } from './check-kafka.js';
import { CliMetrics, metricsHost, serveMetrics } from './cli-metrics.js';
import { commandStopper, type CommandStop } from './command-stopper.js';
import { createClient } from './create-client.js';
import { DailyBudgetSpentError } from './daily-budget-spent-error.js';
import { watchDailyBudget } from './daily-budget-watch.js';
import { klineTransactionalId, resolveKafkaDelivery } from './kafka-delivery.js';
import { ClusterEventLog } from './cluster-event-log.js';
import { RequestLog } from './request-log.js';
import type { ServiceOptions } from './service-options.js';
import { sinkConnectTimeoutMs } from './sink-connect-timeout.js';
import { checkTablesToWrite, ifOwnedOf, type TableToWrite } from './table-writers.js';

/** What a long-running command runs with: the service, its bounds and the parts it may add. */
export interface CommandRunSpec {
  readonly service: ServiceOptions;
  /** `--retry-budget` (seconds): how long a failing request is retried (backoff) before the command fails. */
  readonly retryBudgetS?: number | undefined;
  /** `--duration` (wall-clock seconds): the command stops, flushes and exits 0 after it. */
  readonly durationS?: number | undefined;
  /** `--metrics-port`: Prometheus metrics and probes. */
  readonly metricsPort?: number | undefined;
  /** What set the port, named by a usage error when it is taken. @defaultValue `--metrics-port` */
  readonly metricsFlag?: string;
  /** `--redis` / a pipeline file's `redis:`: this process is one worker of several on the token. */
  readonly redis?: {
    readonly url: string;
    readonly group: string;
    readonly heartbeatMs?: number | undefined;
  };
  /** `--request-log`: every request into each of these dataset directories' `_requests/`. */
  readonly requestLogDirs?: readonly string[] | undefined;
  /** The clock of the client and the pipelines (the demo's accelerated one). @defaultValue the system clock */
  readonly clock?: Clock | undefined;
  /** The command's sinks in words, for a stop that takes long (`Kafka at … and the files in …`). */
  readonly sinks: string;
  /**
   * `/ready` says 200 once any request is answered (a pipeline file's depth or suspension
   * pipelines); otherwise once the pipeline says it did its first work (a K-line backfill done).
   */
  readonly readyOnFirstAnswer?: boolean;
}

/** A K-line step's Kafka sink: its delivery, its transactional id, the ids a takeover fences. */
function klineKafkaOptions(
  step: KlineStep,
  lease: WorkLease | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Partial<KlineSyncOptions> {
  const kafka = step.kafka;
  if (kafka === undefined) return {};
  const options = cliKafkaSinkOptions(kafka, env);
  if (kafka.delivery === 'at-least-once') return { kafka: { ...options, delivery: 'at-least-once' } };
  return {
    kafka: {
      ...options,
      delivery: 'exactly-once',
      transactionalId: klineTransactionalId(kafka, step, lease?.workerId),
      // A cluster worker commits Kafka transactions only while it holds its lease, as files.
      ...(lease === undefined ? {} : { fence: lease.valid }),
    },
    ...(lease === undefined
      ? {}
      : { fenceDeparted: () => lease.departed().map((id) => klineTransactionalId(kafka, step, id)) }),
  };
}

/** Hears what a command's cluster worker reports. */
export type ClusterListener = (event: ClusterSyncEvent | RedisQuotaEvent) => void;

/** Starts a pipeline over this process's share of the items (with a cluster worker's lease). */
export type StartOnShare = (mine: readonly string[], lease?: WorkLease) => PipelineHandle<unknown>;

/** A K-line pipeline of a command: its universe and where its bars go. */
export interface KlineStep {
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  readonly bars: number;
  readonly live: boolean;
  readonly out?: string | undefined;
  readonly format?: DatasetFormat | undefined;
  readonly kafka?: CliKafkaOptions | undefined;
  readonly statePath?: string | undefined;
  readonly checkpointMs?: number | undefined;
  /** The dataset's table upkeep: `false` off, `undefined` the defaults. */
  readonly upkeep?: false | TableUpkeepOptions | undefined;
  /** `--wait-for-writer` / `files.waitForWriter`: wait for another live writer of its series. */
  readonly waitForWriter?: boolean | undefined;
  /** What runs it (`quoteflow sync`), shown to another writer that meets its claims. */
  readonly command?: string | undefined;
}

/**
 * The one orchestrator of the CLI's long-running commands (`backfill`, `sync`, `run`, the demo):
 * metrics, the cluster worker, the request log and the client; the checks before any request or
 * file (Kafka reachable, Redis reachable, codes known); the stop (SIGINT/SIGTERM, `--duration`, a
 * failing pipeline stops the others); and the order things close in.
 */
export class CommandRun {
  readonly client: QuoteflowClient;
  readonly metrics: CliMetrics | undefined;
  readonly worker: ClusterWorker | undefined;
  readonly #stop: CommandStop;
  readonly #stopper: AbortController;
  readonly #requestLog: RequestLog | undefined;
  readonly #cleanups: (() => void)[] = [];
  readonly #requestListeners: ((record: RequestRecord) => void)[] = [];
  readonly #budget: { stop(): void };

  private constructor(
    private readonly ctx: CommandContext,
    private readonly spec: CommandRunSpec,
    private readonly clusterListeners: ClusterListener[],
    parts: { metrics?: CliMetrics; worker?: ClusterWorker; requestLog?: RequestLog },
  ) {
    this.metrics = parts.metrics;
    this.worker = parts.worker;
    this.#requestLog = parts.requestLog;
    const requestLog = this.#requestLog;
    this.client = createClient(
      spec.service,
      ctx.logger,
      this.metrics,
      this.worker?.scheduler,
      spec.clock,
      (r) => {
        requestLog?.record(r);
        if (spec.readyOnFirstAnswer === true) this.metrics?.startOnAnswer(r);
        for (const listener of this.#requestListeners) listener(r);
      },
      spec.retryBudgetS === undefined ? undefined : { budgetMs: spec.retryBudgetS * 1_000 },
    );
    // Stops are SIGINT/SIGTERM and `--duration`; while stopping, the sinks are what the stop waits for.
    this.#stop = commandStopper(ctx, spec.durationS, spec.sinks);
    this.#stopper = this.#stop.controller;
    this.#cleanups.push(() => this.#stop.dispose());
    this.#budget = watchDailyBudget(this.client.scheduler, {
      logger: ctx.logger,
      exitWhenSpent: spec.service.exitWhenBudgetSpent === true,
      // Stops every pipeline (they commit what they read); `all` then throws it (exit 75).
      onExit: (err) => this.#stopper.abort(err),
      setFault: (fault, active) => this.metrics?.setFault(fault, active),
      now: () => this.client.clock.now(),
    });
  }

  /** `--exit-when-budget-spent` ended the command: the error it ends with. */
  #throwIfBudgetSpent(): void {
    if (this.#stopper.signal.reason instanceof DailyBudgetSpentError) throw this.#stopper.signal.reason;
  }

  /** Every event of the cluster worker (none without `--redis`) goes to `listener` from now on. */
  watchCluster(listener: ClusterListener): void {
    this.clusterListeners.push(listener);
  }

  /** Every request the command's client sends from now on (each attempt, once settled) goes to `listener`. */
  watchRequests(listener: (record: RequestRecord) => void): void {
    this.#requestListeners.push(listener);
  }

  /** Makes the command's parts and serves its metrics; nothing is asked of the service yet. */
  static async start(ctx: CommandContext, spec: CommandRunSpec): Promise<CommandRun> {
    const limits = planLimits(spec.service.plan, spec.service.limits);
    const metrics = spec.metricsPort === undefined ? undefined : new CliMetrics(metricsHost(ctx.io.env));
    const clusterListeners: ClusterListener[] = [];
    let clusterLog: ClusterEventLog | undefined;
    const worker =
      spec.redis === undefined
        ? undefined
        : new ClusterWorker({
            redis: spec.redis.url,
            token: spec.service.token,
            limits,
            group: spec.redis.group,
            ...(spec.redis.heartbeatMs === undefined ? {} : { heartbeatMs: spec.redis.heartbeatMs }),
            onEvent: (e, group) => {
              clusterLog?.note(e, group);
              metrics?.onClusterEvent(e);
              for (const listener of clusterListeners) listener(e);
            },
          });
    if (worker !== undefined) clusterLog = new ClusterEventLog(ctx.logger, ctx.status, worker.workerId);
    const requestLog =
      spec.requestLogDirs === undefined
        ? undefined
        : await RequestLog.open(
            spec.requestLogDirs,
            limits,
            (spec.clock ?? spec.service.testClock ?? systemClock).now(),
          );
    const run = new CommandRun(ctx, spec, clusterListeners, {
      ...(metrics && { metrics }),
      ...(worker && { worker }),
      ...(requestLog && { requestLog }),
    });
    if (metrics !== undefined)
      await serveMetrics(metrics, run.client, spec.metricsPort ?? 0, ctx.logger, spec.metricsFlag);
    return run;
  }

  /** Stops every pipeline (they flush); `reason` is why (an operator's failure, say). */
  stop(reason: unknown): void {
    this.#stopper.abort(reason);
  }

  /** Whether `--duration` stopped the command (not a signal, nor a failure before it). */
  get stoppedByDuration(): boolean {
    return this.#stop.stoppedByDuration;
  }

  /** Aborted on SIGINT/SIGTERM, at `--duration`, or when a pipeline fails: every pipeline's signal. */
  get signal(): AbortSignal {
    return this.#stopper.signal;
  }

  /**
   * Before any request or file: state files are of a format this release continues (else exit 2),
   * no other live writer owns a series of a table this command will write (without a cluster,
   * whose workers take over; `QF_OWNED`, or a wait), each Kafka cluster and Redis answer (within
   * 30 s or `--duration`), and the service knows every code (without a cluster: a worker joins
   * first, since the shared `/batch-kline` interval is taken in turns only once it runs).
   */
  async preflight(checks: {
    readonly tables?: readonly TableToWrite[];
    readonly kafka?: readonly {
      readonly kafka: CliKafkaOptions;
      readonly flag: string;
      /** The topics it will write (checked, or created when the options say so). */
      readonly topics?: readonly KafkaTopicKind[];
      /** K-lines not at least once: `P.kline.watermarks` must exist when topic creation is off. */
      readonly watermarks?: boolean;
    }[];
    readonly klines?: readonly {
      readonly codes: readonly string[];
      readonly klineTypes: readonly KlineType[];
      readonly statePath?: string | undefined;
    }[];
  }): Promise<void> {
    this.#throwIfBudgetSpent();
    // With a cluster the dataset is the state, and state files are not read (klineSyncOptions).
    for (const k of this.worker === undefined ? (checks.klines ?? []) : [])
      if (k.statePath !== undefined) await SyncState.load(resolve(this.ctx.io.cwd, k.statePath));
    const timeoutMs = sinkConnectTimeoutMs(this.spec.durationS, this.ctx.io.env);
    if (this.worker === undefined)
      try {
        await checkTablesToWrite(checks.tables ?? [], this.ctx.logger, this.signal);
      } catch (err) {
        // Stopped while waiting for another writer: a stop like any other, as below.
        if (!this.signal.aborted) throw err;
      }
    for (const { kafka, flag, topics, watermarks } of checks.kafka ?? [])
      await checkKafka(kafka, {
        timeoutMs,
        signal: this.ctx.signal,
        flag,
        ...(topics === undefined ? {} : { topics }),
        watermarks: watermarks === true,
      });
    await this.worker?.connect({ timeoutMs, signal: this.ctx.signal });
    if (this.worker !== undefined) return;
    try {
      for (const k of checks.klines ?? [])
        await checkCodesKnown(this.client, k.codes, k.klineTypes, this.signal);
    } catch (err) {
      // Stopped (`--duration`, SIGINT/SIGTERM) while the check waited for its turn in the quota:
      // a stop like any other, not a failure; the pipeline then starts stopped and says what it
      // did not get to.
      if (!(this.signal.aborted && err instanceof AbortedError)) throw err;
    }
  }

  /**
   * Runs `start` over this process's share of `items`: all of them, or a cluster worker's share
   * (in the worker's group, or `options.group`; `options.units` move whole).
   */
  share(
    items: readonly string[],
    start: StartOnShare,
    options: { readonly group?: string; readonly units?: readonly (readonly string[])[] } = {},
  ): PipelineHandle<unknown> {
    if (this.worker === undefined) return start(items);
    return this.worker.share(items, start, { signal: this.signal, ...options });
  }

  /**
   * A K-line step over this process's share of its codes: a cluster worker holds whole
   * `/batch-kline` requests of them (`batchKlineUnits`), so the workers together poll as one client.
   */
  shareKlines(step: KlineStep, start: StartOnShare, group?: string): PipelineHandle<unknown> {
    return this.share(step.codes, start, {
      ...(group === undefined ? {} : { group }),
      units: batchKlineUnits(step.codes, step.klineTypes, this.client.limits),
    });
  }

  /**
   * The delivery of a K-line step's Kafka sink (`--kafka-delivery`, or exactly once where the
   * brokers run transactions), learnt before any request to the service.
   */
  async kafkaDelivery(step: KlineStep, flag: string): Promise<KlineStep> {
    if (step.kafka === undefined) return step;
    const id = klineTransactionalId(step.kafka, step, this.worker?.workerId);
    const delivery = await resolveKafkaDelivery(step.kafka, id, {
      timeoutMs: sinkConnectTimeoutMs(this.spec.durationS, this.ctx.io.env),
      flag,
      logger: this.ctx.logger,
    });
    return { ...step, kafka: { ...step.kafka, delivery } };
  }

  /**
   * A K-line step's `klineSync` options over `mine` (its codes, or a cluster worker's share of
   * them) on this command's client, stop signal and cluster lease.
   */
  klineSyncOptions(step: KlineStep, mine: readonly string[], lease: WorkLease | undefined): KlineSyncOptions {
    const { client } = this;
    return {
      client,
      codes: mine,
      klineTypes: step.klineTypes,
      bars: step.bars,
      live: step.live,
      signal: this.signal,
      ...(step.out === undefined
        ? {}
        : {
            files: {
              dir: datasetDir(this.ctx.io.cwd, step.out),
              ...(step.format === undefined ? {} : { format: step.format }),
              ...(step.upkeep === undefined ? {} : { upkeep: step.upkeep }),
              // A cluster worker commits files only while it holds its lease, and takes over in
              // the table the series its cluster gave it.
              ...(lease === undefined ? {} : { fence: lease.valid }),
              ifOwned: ifOwnedOf(step.waitForWriter, lease !== undefined),
              ...(step.command === undefined ? {} : { command: step.command }),
            },
          }),
      ...klineKafkaOptions(step, lease, this.ctx.io.env),
      // With a cluster the shared dataset is the state (several processes must not rewrite one file).
      ...(step.statePath === undefined || this.worker !== undefined
        ? {}
        : { statePath: resolve(this.ctx.io.cwd, step.statePath) }),
      ...(step.checkpointMs === undefined ? {} : { checkpointMs: step.checkpointMs }),
    };
  }

  /**
   * Waits for every pipeline; the first that fails stops the others (they flush), and its error is
   * thrown once all have ended. Resolves with each pipeline's result.
   */
  async all<S>(handles: readonly PipelineHandle<S>[], onEnded?: () => void): Promise<S[]> {
    const results = await Promise.allSettled(
      handles.map((h) =>
        h.done
          .catch((err: unknown) => {
            this.#stopper.abort(err);
            throw err;
          })
          .finally(() => onEnded?.()),
      ),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    this.#throwIfBudgetSpent();
    return results.map((r) => (r as PromiseFulfilledResult<S>).value);
  }

  /** Stops what still runs, then closes the client, the request log, the worker and the metrics. */
  async close(handles: readonly PipelineHandle<unknown>[] = []): Promise<void> {
    this.#budget.stop();
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    await Promise.allSettled(handles.map((h) => h.stop()));
    await this.client.close();
    await this.#requestLog?.close();
    await this.worker?.close();
    await this.metrics?.close();
  }
}
