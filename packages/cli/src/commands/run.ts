import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Exchange } from '@quoteflow/core';
import type { WithoutSeqPolicy } from '@quoteflow/operators';
import type { WorkLease } from '@quoteflow/cluster';
import type { PipelineHandle } from '@quoteflow/pipelines';
import type { CommandContext } from '../command-context.js';
import type { KlinePipelineStep, PipelineStep } from '../internal/pipeline-file.js';
import { checkOutDir } from '../internal/check-out-dir.js';
import { describeSinks } from '../internal/stop-waits.js';
import { logClusterEvent } from '../internal/log-cluster-event.js';
import { gapWarningFields } from '../internal/gap-warning.js';
import { sinkConnectTimeoutMs } from '../internal/sink-connect-timeout.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';
import { StatusTicker, statusIntervalMs } from '../internal/status-ticker.js';

interface RunFlags {
  baseUrl?: string;
  token?: string;
  plan?: string;
  dryRun?: boolean;
  schema?: boolean;
  requestLog?: boolean;
}

/** The pipeline file `run --help` shows. */
export const RUN_HELP_EXAMPLE = `version: 1
service: { plan: professional }
duration: 60
pipelines:
  - source: { kline: { codes: [BTCUSDT, AAPL.US], klineTypes: [1], bars: 100 } }
    sinks: { files: { out: ./data } }
    state: ./data/state.json
  - source: { kline: { codes: [ETHUSDT], klineTypes: [1] } }
    sinks: { stdout: { finalOnly: true } }
    operators:
      - resample: { to: { minutes: 15 } }
        sinks: { stdout: {} }
  - source: { suspensions: { exchanges: [nyse] } }
`;

/** `quoteflow run PIPELINE.yaml`: declarative pipelines, validated before anything starts. */
export function registerRunCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('run')
    .summary('run a declarative pipeline file (YAML)')
    .description(
      'Runs the pipelines of a YAML file: each has one source (kline: sync; depth: capture; suspensions: watch) and ' +
        'sinks (files: {out, format}; kafka: {brokers, topicPrefix}; stdout: NDJSON lines, kline with {finalOnly}). ' +
        'A kline pipeline may add operators, each with its own stdout sink and no request of its own: ' +
        'resample: {to: K | {minutes: N}, emit: final|all} and yesterdayClose: {} (needs kline type 8). ' +
        'Values may be ${NAME} or ${NAME:default}, filled from the environment ($${ for a literal ${). ' +
        'The file is validated first; an error names the file, line and field. The token comes from --token, ' +
        'QUOTEFLOW_TOKEN, or the variable named by service.tokenEnv, never from the file. Runs until `duration` ' +
        'seconds pass or SIGINT/SIGTERM. More in examples/pipelines/.',
    )
    // After the options and unwrapped (a description is wrapped to the terminal): copy it as it is.
    .addHelpText(
      'after',
      `\nExample (save as pipeline.yaml; test/cli-pipeline-files.test.ts runs it):\n\n${RUN_HELP_EXAMPLE}`,
    )
    .argument('[pipeline.yaml]', 'pipeline file')
    .option('--schema', "print the pipeline file's JSON Schema (for editors and linters) and exit")
    .option(
      '--request-log',
      "log every request into each files sink's DIR/_requests/ (quoteflow report draws it)",
    )
    .option(
      '--dry-run',
      'check the file, its ${ENV} references, the service options and every output directory, print what would run, and exit (no request, no file)',
    );
  addServiceOptions(cmd).action(async (file: string | undefined, flags: RunFlags) => {
    // Command implementations load here, not at start: `quoteflow --help` must not pay for them.
    const { loadPipelineFile, pipelineFileJsonSchema } = await import('../internal/pipeline-file.js');
    if (flags.schema === true) {
      ctx.out(`${toJson(pipelineFileJsonSchema(), 2)}\n`);
      return;
    }
    if (file === undefined) throw new UsageError('a pipeline file is required: quoteflow run PIPELINE.yaml');
    const spec = await loadPipelineFile(resolve(ctx.io.cwd, file), ctx.io.env);
    const [
      { planLimits, estimatePlan, limitOverridesOf },
      { ClusterWorker, syncGroupName },
      { depthCapture, klineSync, suspensionWatch },
      { CliMetrics, serveMetrics },
      { createClient },
      { depthMessageValue, suspensionMessageValue },
      { RequestLog },
      { checkKafka, cliKafkaSinkOptions },
      { checkCodesKnown },
    ] = await Promise.all([
      import('@quoteflow/core'),
      import('@quoteflow/cluster'),
      import('@quoteflow/pipelines'),
      import('../internal/cli-metrics.js'),
      import('../internal/create-client.js'),
      import('@quoteflow/sinks'),
      import('../internal/request-log.js'),
      // Loaded here: the Kafka sink's libraries must not slow `quoteflow --help`.
      import('../internal/check-kafka.js'),
      import('../internal/check-codes-known.js'),
    ]);
    const kafkaOf = (sinks: PipelineStep['sinks']) =>
      sinks?.kafka === undefined
        ? {}
        : {
            kafka: cliKafkaSinkOptions(
              { brokers: sinks.kafka.brokers, topicPrefix: sinks.kafka.topicPrefix },
              ctx.io.env,
            ),
          };
    const tokenEnv = spec.service.tokenEnv;
    const token = flags.token ?? (tokenEnv === undefined ? undefined : ctx.io.env[tokenEnv]);
    if (token !== undefined) ctx.redactor.add(token);
    if (tokenEnv !== undefined && token === undefined && ctx.io.env['QUOTEFLOW_TOKEN'] === undefined) {
      throw new UsageError(`service.tokenEnv names ${tokenEnv}, which is not set`);
    }
    const resolvedService = await resolveServiceOptions(
      {
        ...((flags.baseUrl ?? spec.service.baseUrl) !== undefined
          ? { baseUrl: (flags.baseUrl ?? spec.service.baseUrl)! }
          : {}),
        ...(token === undefined ? {} : { token }),
        ...((flags.plan ?? spec.service.plan) !== undefined
          ? { plan: (flags.plan ?? spec.service.plan)! }
          : {}),
      },
      ctx.io.env,
    );
    // The file's limits, then QUOTEFLOW_LIMITS and --limit on top; each only tighter than the plan.
    const { checkLimitOverrides, mergeLimitOverrides, parseLimitOverrides } =
      await import('../internal/limit-overrides.js');
    const fileLimits = parseLimitOverrides(
      Object.entries(spec.service.limits ?? {}).map(([key, value]) => `${key}=${value}`),
      'service.limits',
    );
    const limits = mergeLimitOverrides(fileLimits, resolvedService.limits);
    checkLimitOverrides(limits, resolvedService.plan, 'service.limits');
    const service = { ...resolvedService, limits };
    const statusEveryMs = statusIntervalMs(ctx.io.env);
    for (const [i, step] of spec.pipelines.entries()) {
      const out = step.sinks?.files?.out;
      if (out !== undefined) await checkOutDir(out, ctx.io.cwd, `pipelines[${i}].sinks.files.out`);
    }
    if (flags.dryRun === true) {
      const { describePipelineFile } = await import('../internal/pipeline-dry-run.js');
      ctx.out(describePipelineFile(spec, file, service.plan, service.limits));
      return;
    }
    const { KlineStreams } = await import('../internal/pipeline-streams.js');
    const streams: InstanceType<typeof KlineStreams>[] = [];
    let operatorFailure: { error: unknown } | undefined;
    const metrics = spec.metricsPort === undefined ? undefined : new CliMetrics();
    // `redis:` — this process is one of several workers: the plan is shared, each pipeline's items
    // (codes, exchanges) are divided among the live workers (@quoteflow/cluster).
    const redisUrl =
      spec.redis === undefined ? undefined : (spec.redis.url ?? ctx.io.env[spec.redis.urlEnv!]);
    if (spec.redis !== undefined && redisUrl === undefined) {
      throw new UsageError(`redis.urlEnv names ${spec.redis.urlEnv}, which is not set`);
    }
    const worker =
      redisUrl === undefined
        ? undefined
        : new ClusterWorker({
            redis: redisUrl,
            token: service.token,
            limits: planLimits(service.plan, service.limits),
            group: 'run',
            ...(spec.redis?.heartbeatMs === undefined ? {} : { heartbeatMs: spec.redis.heartbeatMs }),
            onEvent: (e) => {
              logClusterEvent(ctx.logger, e);
              metrics?.onClusterEvent(e);
            },
          });
    const share = <S>(
      name: string,
      items: readonly string[],
      start: (mine: readonly string[], lease?: WorkLease) => PipelineHandle<S>,
    ): PipelineHandle<unknown> =>
      worker === undefined
        ? start(items)
        : worker.share(items, start, {
            signal: stopper.signal,
            group: `run:${name}:${syncGroupName(items, [])}`,
          });
    const logDirs = spec.pipelines.flatMap((s) =>
      s.sinks?.files === undefined ? [] : [resolve(ctx.io.cwd, s.sinks.files.out)],
    );
    if (flags.requestLog === true && logDirs.length === 0)
      throw new UsageError('--request-log writes beside a dataset: no pipeline of the file has a files sink');
    const requestLog =
      flags.requestLog === true
        ? await RequestLog.open(logDirs, planLimits(service.plan, service.limits), Date.now())
        : undefined;
    const client = createClient(service, ctx.logger, metrics, worker?.scheduler, undefined, (r) => {
      requestLog?.record(r);
      metrics?.startOnAnswer(r);
    });
    if (metrics !== undefined) await serveMetrics(metrics, client, spec.metricsPort ?? 0, ctx.logger);
    const stopper = new AbortController();
    const onStop = (): void => stopper.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onStop();
    ctx.signal.addEventListener('abort', onStop, { once: true });
    const timer =
      spec.duration === undefined
        ? undefined
        : setTimeout(() => stopper.abort(new Error('duration reached')), spec.duration * 1000);
    const warn = (name: string) => (message: string, error: unknown) =>
      ctx.logger.warn({ pipeline: name, err: error instanceof Error ? error.message : error }, message);
    const handles: [string, PipelineHandle<unknown>][] = [];
    let running = 0;
    const flushing = ctx.stopWaits.duringStop(
      stopper.signal,
      spec.pipelines
        .map((s) => describeSinks({ out: s.sinks?.files?.out, kafka: s.sinks?.kafka }))
        .filter((d) => d !== '')
        .join('; '),
    );
    const ticker = new StatusTicker(ctx.status, statusEveryMs, () => ({ pipelines: running }));
    try {
      for (const [i, step] of spec.pipelines.entries()) {
        const kafka = step.sinks?.kafka;
        if (kafka !== undefined)
          await checkKafka(kafka, {
            timeoutMs: sinkConnectTimeoutMs(spec.duration, ctx.io.env),
            signal: ctx.signal,
            flag: `pipelines[${i}].sinks.kafka`,
          });
      }
      await worker?.connect({
        timeoutMs: sinkConnectTimeoutMs(spec.duration, ctx.io.env),
        signal: ctx.signal,
      });
      // Without redis only: see run-kline-sync (a worker joins first).
      for (const step of worker === undefined ? spec.pipelines : [])
        if ('kline' in step.source)
          await checkCodesKnown(
            client,
            step.source.kline.codes,
            step.source.kline.klineTypes,
            stopper.signal,
          );
      spec.pipelines.forEach((step, i) => {
        const name = step.name ?? `pipelines[${i}]`;
        const files =
          step.sinks?.files === undefined
            ? {}
            : { files: { dir: resolve(ctx.io.cwd, step.sinks.files.out), format: step.sinks.files.format } };
        if ('kline' in step.source) {
          const s = step as KlinePipelineStep;
          const stream = new KlineStreams(s, ctx.out, (error) => {
            operatorFailure ??= { error };
            stopper.abort(error);
          });
          streams.push(stream);
          metrics?.expectGaps(s.source.kline.klineTypes);
          handles.push([
            name,
            share(name, s.source.kline.codes, (codes, lease) =>
              klineSync({
                client,
                codes,
                klineTypes: s.source.kline.klineTypes,
                bars: s.source.kline.bars,
                // A cluster worker commits files only while it holds its lease.
                ...('files' in files && lease !== undefined
                  ? { files: { ...files.files, fence: lease.valid } }
                  : files),
                ...kafkaOf(s.sinks),
                // With redis: the shared dataset is the state (several processes must not rewrite one file).
                ...(s.state === undefined || worker !== undefined
                  ? {}
                  : { statePath: resolve(ctx.io.cwd, s.state) }),
                // With redis: the whole universe's refresh period, so workers take turns (see sync).
                ...(worker === undefined
                  ? {}
                  : {
                      refreshPeriodMs: estimatePlan(
                        client.plan,
                        { codes: s.source.kline.codes, klineTypes: s.source.kline.klineTypes, bars: 0 },
                        limitOverridesOf(client.limits),
                      ).live.refreshPeriodMs,
                    }),
                signal: stopper.signal,
                ...(stream.listening || metrics !== undefined
                  ? {
                      onUpdate: (u) => {
                        metrics?.onUpdate(u);
                        if (stream.listening) stream.push(u);
                      },
                    }
                  : {}),
                onEvent: (e) => {
                  if (e.type === 'gap') metrics?.gaps.inc({ kline_type: String(e.klineType) });
                  if (e.type === 'gap')
                    ctx.logger.warn({ pipeline: name, ...gapWarningFields(e), reason: e.reason }, e.type);
                  else if (e.type === 'warning') ctx.logger.warn({ pipeline: name, ...e }, e.type);
                  else if (e.type === 'backfill-done' || (e.type === 'checkpoint' && e.files.length > 0))
                    ctx.logger.info({ pipeline: name, event: e.type }, e.type);
                },
              }),
            ),
          ]);
        } else if ('depth' in step.source) {
          const s = step as Extract<PipelineStep, { source: { depth: unknown } }>;
          handles.push([
            name,
            share(name, s.source.depth.codes, (codes) =>
              depthCapture({
                client,
                codes,
                ...(s.source.depth.intervalMs === undefined ? {} : { intervalMs: s.source.depth.intervalMs }),
                ...(s.operators?.[0] === undefined ? {} : { dedupe: dedupeOptions(s.operators[0].dedupe) }),
                ...files,
                ...kafkaOf(s.sinks),
                signal: stopper.signal,
                ...(s.sinks.stdout === undefined
                  ? {}
                  : { onTick: (t) => ctx.out(`${toJson(depthMessageValue(t))}\n`) }),
                onWarning: warn(name),
              }),
            ),
          ]);
        } else {
          const s = step as Extract<PipelineStep, { source: { suspensions: unknown } }>;
          handles.push([
            name,
            share(name, s.source.suspensions.exchanges, (exchanges) =>
              suspensionWatch({
                client,
                exchanges: exchanges as Exchange[],
                ...files,
                ...kafkaOf(s.sinks),
                signal: stopper.signal,
                // A stdout sink gets whole records (the Kafka value and the change); else a summary line.
                onChange: (c) =>
                  ctx.out(
                    `${toJson(s.sinks?.stdout === undefined ? { pipeline: name, change: c.change, exchange: c.record.exchange, symbol: c.record.symbol, publishDate: c.record.publishDate } : { change: c.change, ...suspensionMessageValue(c.record) })}\n`,
                  ),
                onWarning: warn(name),
              }),
            ),
          ]);
        }
      });
      running = handles.length;
      ctx.logger.info({ pipelines: handles.map(([n]) => n) }, 'pipelines started');
      // One failing pipeline stops the others (they flush), then the failure decides the exit code.
      const results = await Promise.allSettled(
        handles.map(([, h]) =>
          h.done
            .catch((err: unknown) => {
              stopper.abort(err);
              throw err;
            })
            .finally(() => void running--),
        ),
      );
      for (const stream of streams) stream.complete();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      // An operator that failed stopped the run: its error decides the exit code.
      if (operatorFailure !== undefined) throw operatorFailure.error;
      ctx.logger.info({ pipelines: handles.length }, 'pipelines stopped: sinks flushed');
    } finally {
      ticker.stop();
      flushing();
      if (timer !== undefined) clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onStop);
      await Promise.allSettled(handles.map(([, h]) => h.stop()));
      await client.close();
      await requestLog?.close();
      await worker?.close();
      await metrics?.close();
    }
  });
}

/** A pipeline file's `dedupe` operator as `dedupeBySeq`'s options (absent keys left out). */
function dedupeOptions(d: { withoutSeq?: WithoutSeqPolicy | undefined; maxCodes?: number | undefined }) {
  return {
    ...(d.withoutSeq === undefined ? {} : { withoutSeq: d.withoutSeq }),
    ...(d.maxCodes === undefined ? {} : { maxCodes: d.maxCodes }),
  };
}
