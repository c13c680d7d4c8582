import { datasetDir } from './check-out-dir.js';
import { resolve } from 'node:path';
import type { Exchange } from '@quoteflow/core';
import { syncGroupName } from '@quoteflow/cluster';
import type { WithoutSeqPolicy } from '@quoteflow/operators';
import {
  depthCapture,
  klineSync,
  suspensionWatch,
  type KlineSyncEvent,
  type PipelineHandle,
} from '@quoteflow/pipelines';
import type { IfOwned, TableUpkeepOptions } from '@quoteflow/sinks';
import { depthMessageValue, suspensionMessageValue } from '@quoteflow/sinks/internal';
import type { CommandContext } from '../command-context.js';
import { cliKafkaSinkOptions } from './check-kafka.js';
import { pipelineKafkaOptions, type CliKafkaOptions } from './kafka-options.js';
import { resolveSchemaRegistry } from './schema-registry-option.js';
import { CommandRun, type CommandRunSpec, type KlineStep, type StartOnShare } from './command-run.js';
import { gapWarningFields } from './gap-warning.js';
import type { KlinePipelineStep, PipelineFile, PipelineStep } from './pipeline-file.js';
import { KlineStreams } from './pipeline-streams.js';
import type { ServiceOptions } from './service-options.js';
import { StatusTicker, statusIntervalMs } from './status-ticker.js';
import { describeSinks } from './stop-waits.js';
import { toJson } from './to-json.js';
import { UpkeepLog, writerUpkeepOf } from './upkeep-log.js';
import { UsageError } from './usage-error.js';
import { ifOwnedOf, klineSeriesOf, type TableToWrite } from './table-writers.js';

type DepthStep = Extract<PipelineStep, { source: { depth: unknown } }>;
type SuspensionStep = Extract<PipelineStep, { source: { suspensions: unknown } }>;

/**
 * `quoteflow run`: every pipeline of a validated file on one client (one quota), started after
 * the checks, stopped together (SIGINT/SIGTERM, `duration`, or the first that fails).
 */
export async function runPipelineFile(
  ctx: CommandContext,
  spec: PipelineFile,
  service: ServiceOptions,
  flags: {
    readonly requestLog: boolean;
    /** `--metrics-port`, over the file's `metricsPort`. */
    readonly metricsPort?: number | undefined;
    /** `--wait-for-writer`: every files sink waits for another live writer (as `files.waitForWriter`). */
    readonly waitForWriter: boolean;
  },
): Promise<void> {
  const statusEveryMs = statusIntervalMs(ctx.io.env);
  await resolveKafkaBlocks(ctx, spec);
  const command = await CommandRun.start(
    ctx,
    commandSpec(ctx, spec, service, flags.requestLog, flags.metricsPort),
  );
  const waitFor = (s: PipelineStep): boolean => flags.waitForWriter || s.sinks?.files?.waitForWriter === true;
  const handles: PipelineHandle<unknown>[] = [];
  const streams: KlineStreams[] = [];
  let running = 0;
  let operatorFailure: { error: unknown } | undefined;
  const ticker = new StatusTicker(ctx.status, statusEveryMs, () => ({ pipelines: running }));
  try {
    await command.preflight(preflightChecks(ctx, spec, waitFor));
    for (const [i, step] of spec.pipelines.entries()) {
      const name = step.name ?? `pipelines[${i}]`;
      const group = (items: readonly string[]): string => `run:${name}:${syncGroupName(items, [])}`;
      const share: Share = (items, start) => command.share(items, start, { group: group(items) });
      if ('kline' in step.source) {
        const s = step as KlinePipelineStep;
        const stream = new KlineStreams(s, ctx.out, (error) => {
          operatorFailure ??= { error };
          command.stop(error);
        });
        streams.push(stream);
        const kline = await command.kafkaDelivery(
          { ...klineStepOf(s), waitForWriter: waitFor(s), command: 'quoteflow run' },
          `pipelines[${i}].sinks.kafka`,
        );
        handles.push(
          startKline(ctx, command, name, s, kline, stream, (start) =>
            command.shareKlines(kline, start, group(kline.codes)),
          ),
        );
      } else if ('depth' in step.source)
        handles.push(startDepth(ctx, command, name, step as DepthStep, share, waitFor(step)));
      else handles.push(startSuspensions(ctx, command, name, step as SuspensionStep, share, waitFor(step)));
    }
    running = handles.length;
    ctx.logger.info(
      { pipelines: spec.pipelines.map((s, i) => s.name ?? `pipelines[${i}]`) },
      'pipelines started',
    );
    try {
      await command.all(handles, () => void running--);
    } finally {
      for (const stream of streams) stream.complete();
    }
    // An operator that failed stopped the run: its error decides the exit code.
    if (operatorFailure !== undefined) throw operatorFailure.error;
    ctx.logger.info({ pipelines: handles.length }, 'pipelines stopped: sinks flushed');
  } finally {
    ticker.stop();
    await command.close(handles);
  }
}

/** What is checked before any request: the tables the files sinks write, the Kafka clusters, the kline universes. */
function preflightChecks(
  ctx: CommandContext,
  spec: PipelineFile,
  waitFor: (s: PipelineStep) => boolean,
): Parameters<CommandRun['preflight']>[0] {
  return {
    tables: spec.pipelines.flatMap((step) => tableOf(ctx, step, waitFor(step))),
    kafka: spec.pipelines.flatMap((step, i) => {
      const kafka = kafkaOfStep.get(step);
      const topics =
        'kline' in step.source
          ? (['kline'] as const)
          : 'depth' in step.source
            ? (['depth'] as const)
            : (['suspension'] as const);
      const watermarks = 'kline' in step.source && step.sinks?.kafka?.delivery !== 'at-least-once';
      return kafka === undefined ? [] : [{ kafka, flag: `pipelines[${i}].sinks.kafka`, topics, watermarks }];
    }),
    klines: spec.pipelines.flatMap((step) =>
      'kline' in step.source ? [klineStepOf(step as KlinePipelineStep)] : [],
    ),
  };
}

/** The command's parts for a pipeline file: its service, duration, metrics, cluster, request log. */
function commandSpec(
  ctx: CommandContext,
  spec: PipelineFile,
  service: ServiceOptions,
  requestLog: boolean,
  metricsPort: number | undefined,
): CommandRunSpec {
  const logDirs = spec.pipelines.flatMap((s) =>
    // The request log is a local file beside a local dataset; an s3:// one has none.
    s.sinks?.files === undefined || /^s3:\/\//i.test(s.sinks.files.out)
      ? []
      : [resolve(ctx.io.cwd, s.sinks.files.out)],
  );
  if (requestLog && logDirs.length === 0)
    throw new UsageError(
      '--request-log writes beside a local dataset: no pipeline of the file has a files sink with a local out',
    );
  // `redis:`: this process is one of several workers; each pipeline's items are divided among them.
  const redisUrl = spec.redis === undefined ? undefined : (spec.redis.url ?? ctx.io.env[spec.redis.urlEnv!]);
  if (spec.redis !== undefined && redisUrl === undefined)
    throw new UsageError(`redis.urlEnv names ${spec.redis.urlEnv}, which is not set`);
  return {
    service,
    durationS: spec.duration,
    metricsPort: metricsPort ?? spec.metricsPort,
    metricsFlag: metricsPort === undefined ? 'metricsPort' : '--metrics-port',
    ...(redisUrl === undefined
      ? {}
      : { redis: { url: redisUrl, group: 'run', heartbeatMs: spec.redis?.heartbeatMs } }),
    ...(requestLog ? { requestLogDirs: logDirs } : {}),
    sinks: spec.pipelines
      .map((s) => describeSinks({ out: s.sinks?.files?.out, kafka: kafkaOfStep.get(s) }))
      .filter((d) => d !== '')
      .join('; '),
    readyOnFirstAnswer: true,
  };
}

/** Each kafka: block's connection (files read, properties checked) and registry, before anything starts. */
async function resolveKafkaBlocks(ctx: CommandContext, spec: PipelineFile): Promise<void> {
  for (const [i, step] of spec.pipelines.entries()) {
    const block = step.sinks?.kafka;
    if (block === undefined) continue;
    const kind = 'kline' in step.source ? 'kline' : 'depth' in step.source ? 'depth' : 'suspension';
    const field = `pipelines[${i}].sinks.kafka`;
    kafkaOfStep.set(step, {
      ...(await pipelineKafkaOptions(block, field, ctx.io, ctx.redactor)),
      schemaRegistry: await resolveSchemaRegistry(
        block.schemaRegistry,
        [kind],
        ctx.io.env,
        `${field}.schemaRegistry`,
      ),
    });
  }
}

type Share = (items: readonly string[], start: StartOnShare) => PipelineHandle<unknown>;

/** A kline pipeline of the file as the command's K-line step. */
function klineStepOf(s: KlinePipelineStep): KlineStep {
  return {
    ...s.source.kline,
    live: true,
    out: s.sinks?.files?.out,
    format: s.sinks?.files?.format,
    upkeep: upkeepOf(s.sinks?.files?.upkeep),
    kafka:
      s.sinks?.kafka === undefined
        ? undefined
        : {
            ...kafkaOfStep.get(s)!,
            delivery: s.sinks.kafka.delivery,
            transactionalId: s.sinks.kafka.transactionalId,
          },
    statePath: s.state,
  };
}

/** `sinks.files.upkeep` of a pipeline as its writer's option (`true` or absent: the defaults). */
function upkeepOf(
  upkeep:
    | boolean
    | { rowsPerFile?: number | undefined; retention?: number | undefined; logRetention?: number | undefined }
    | undefined,
): false | TableUpkeepOptions | undefined {
  if (upkeep === undefined || upkeep === true) return undefined;
  if (upkeep === false) return false;
  return {
    ...(upkeep.rowsPerFile === undefined ? {} : { rowsPerFile: upkeep.rowsPerFile }),
    ...(upkeep.retention === undefined ? {} : { retentionMs: upkeep.retention }),
    ...(upkeep.logRetention === undefined ? {} : { logRetentionMs: upkeep.logRetention }),
  };
}

function startKline(
  ctx: CommandContext,
  command: CommandRun,
  name: string,
  s: KlinePipelineStep,
  step: KlineStep,
  stream: KlineStreams,
  share: (start: StartOnShare) => PipelineHandle<unknown>,
): PipelineHandle<unknown> {
  const { metrics } = command;
  metrics?.expectGaps(step.klineTypes);
  const upkeep = new UpkeepLog(ctx.logger, { pipeline: name });
  return share((codes, lease) =>
    klineSync({
      ...command.klineSyncOptions(step, codes, lease),
      ...(stream.listening || metrics !== undefined
        ? {
            onUpdate: (u) => {
              metrics?.onKlineUpdate(u, s.sinks?.kafka !== undefined);
              if (stream.listening) stream.push(u);
            },
          }
        : {}),
      onEvent: (e) => {
        metrics?.onKlineEvent(e);
        if (e.type === 'backfill-done') stream.historyRead();
        if (e.type === 'upkeep') upkeep.event(e.event);
        else logKlineEvent(ctx, name, e);
      },
    }),
  );
}

function logKlineEvent(ctx: CommandContext, pipeline: string, e: KlineSyncEvent): void {
  if (e.type === 'gap') ctx.logger.warn({ pipeline, ...gapWarningFields(e), reason: e.reason }, e.type);
  else if (e.type === 'warning') ctx.logger.warn({ pipeline, ...e }, e.type);
  else if (e.type === 'code-dropped')
    ctx.logger.warn(
      { pipeline, code: e.code, reason: e.reason },
      `the service no longer serves ${e.code}: dropped from the run, the other codes go on`,
    );
  else if (e.type === 'backfill-incomplete')
    ctx.logger.warn(
      { pipeline, series: `${e.code}:${e.klineType}`, held: e.held, wanted: e.wanted },
      `the run ended before ${e.code}:${e.klineType} held its ${e.wanted} bars (${e.held}); the next run fetches the rest`,
    );
  else if (e.type === 'backfill-done' || (e.type === 'checkpoint' && e.files.length > 0))
    ctx.logger.info({ pipeline, event: e.type }, e.type);
}

function startDepth(
  ctx: CommandContext,
  command: CommandRun,
  name: string,
  s: DepthStep,
  share: Share,
  waitForWriter: boolean,
): PipelineHandle<unknown> {
  const dedupe = s.operators?.[0]?.dedupe;
  return share(s.source.depth.codes, (codes) =>
    depthCapture({
      client: command.client,
      codes,
      ...(s.source.depth.intervalMs === undefined ? {} : { intervalMs: s.source.depth.intervalMs }),
      ...(dedupe === undefined ? {} : { dedupe: dedupeOptions(dedupe) }),
      ...filesOf(ctx, command, name, s, ifOwnedOf(waitForWriter, command.worker !== undefined)),
      ...kafkaOf(s, ctx.io.env),
      signal: command.signal,
      ...(s.sinks.stdout === undefined
        ? {}
        : { onTick: (t) => ctx.out(`${toJson(depthMessageValue(t))}\n`) }),
      onWarning: warn(ctx, name),
    }),
  );
}

function startSuspensions(
  ctx: CommandContext,
  command: CommandRun,
  name: string,
  s: SuspensionStep,
  share: Share,
  waitForWriter: boolean,
): PipelineHandle<unknown> {
  return share(s.source.suspensions.exchanges, (exchanges) =>
    suspensionWatch({
      client: command.client,
      exchanges: exchanges as Exchange[],
      ...filesOf(ctx, command, name, s, ifOwnedOf(waitForWriter, command.worker !== undefined)),
      ...kafkaOf(s, ctx.io.env),
      signal: command.signal,
      // A stdout sink gets whole records (the Kafka value and the change); else a summary line.
      onChange: (c) =>
        ctx.out(
          `${toJson(
            s.sinks?.stdout === undefined
              ? {
                  pipeline: name,
                  change: c.change,
                  exchange: c.record.exchange,
                  symbol: c.record.symbol,
                  publish_date: new Date(c.record.publishAtMs).toISOString(),
                }
              : { change: c.change, ...suspensionMessageValue(c.record) },
          )}\n`,
        ),
      onWarning: warn(ctx, name),
    }),
  );
}

/** A depth or suspension pipeline's files sink: its table, claims and upkeep (logged and counted per pipeline). */
function filesOf(ctx: CommandContext, command: CommandRun, name: string, s: PipelineStep, ifOwned: IfOwned) {
  const files = s.sinks?.files;
  return files === undefined
    ? {}
    : {
        files: {
          dir: datasetDir(ctx.io.cwd, files.out),
          format: files.format,
          ifOwned,
          command: 'quoteflow run',
          ...writerUpkeepOf(upkeepOf(files.upkeep), ctx.logger, command.metrics, { pipeline: name }),
        },
      };
}

/** The table a pipeline's files sink writes and the series it claims there (checked before any request). */
function tableOf(ctx: CommandContext, s: PipelineStep, waitForWriter: boolean): TableToWrite[] {
  const files = s.sinks?.files;
  if (files === undefined) return [];
  const dir = datasetDir(ctx.io.cwd, files.out);
  const ifOwned = ifOwnedOf(waitForWriter, false);
  if ('kline' in s.source) {
    const { codes, klineTypes } = s.source.kline;
    return [{ dir, dataset: 'kline', series: klineSeriesOf(codes, klineTypes), ifOwned }];
  }
  if ('depth' in s.source) return [{ dir, dataset: 'depth', series: s.source.depth.codes, ifOwned }];
  return [{ dir, dataset: 'suspension', series: s.source.suspensions.exchanges, ifOwned }];
}

/** The Kafka options of each pipeline with a kafka: sink, resolved once at the start of the run. */
const kafkaOfStep = new WeakMap<PipelineStep, CliKafkaOptions>();

function kafkaOf(s: PipelineStep, env: Readonly<Record<string, string | undefined>>) {
  const kafka = kafkaOfStep.get(s);
  return kafka === undefined ? {} : { kafka: cliKafkaSinkOptions(kafka, env) };
}

function warn(ctx: CommandContext, pipeline: string) {
  return (message: string, error: unknown) =>
    ctx.logger.warn({ pipeline, err: error instanceof Error ? error.message : error }, message);
}

/** A pipeline file's `dedupe` operator as `dedupeBySeq`'s options (absent keys left out). */
function dedupeOptions(d: { withoutSeq?: WithoutSeqPolicy | undefined; maxCodes?: number | undefined }) {
  return {
    ...(d.withoutSeq === undefined ? {} : { withoutSeq: d.withoutSeq }),
    ...(d.maxCodes === undefined ? {} : { maxCodes: d.maxCodes }),
  };
}
