import { Option, type Command } from 'commander';
import type { DatasetFormat } from '@quoteflow/sinks';
import { DATASET_FORMAT_CHOICES } from '../internal/choices.js';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { intAtLeast } from '../internal/parse-args.js';
import { checkOutDir, datasetDir } from '../internal/check-out-dir.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { UsageError } from '../internal/usage-error.js';
import { WAIT_FOR_WRITER_HELP } from '../internal/wait-for-writer-option.js';
import { commandStopper } from '../internal/command-stopper.js';
import { SCHEMA_REGISTRY_HELP, schemaRegistryFlag } from '../internal/schema-registry-option.js';
import { StatusTicker, statusIntervalMs } from '../internal/status-ticker.js';
import { sinkConnectTimeoutMs } from '../internal/sink-connect-timeout.js';
import { describeSinks } from '../internal/stop-waits.js';
import { addUpkeepOptions, resolveUpkeep, type UpkeepFlags } from '../internal/upkeep-options.js';
import { writerUpkeepOf } from '../internal/upkeep-log.js';
import type { CliMetrics } from '../internal/cli-metrics.js';
import {
  addKafkaConnectionOptions,
  resolveKafkaConnection,
  type KafkaConnectionFlags,
} from '../internal/kafka-options.js';

interface DepthFlags extends KafkaConnectionFlags, UpkeepFlags {
  codes?: string[];
  codesFile?: string;
  intervalMs?: number;
  out?: string;
  format: DatasetFormat;
  kafka?: string;
  topicPrefix: string;
  schemaRegistry?: string;
  duration?: number;
  metricsPort?: number;
  waitForWriter?: boolean;
  baseUrl?: string;
  token?: string;
  plan?: string;
}

/** `quoteflow depth`: polls `/depth-tick`, drops repeated `seq`, writes files and/or Kafka. */
export function registerDepthCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('depth')
    .summary('poll /depth-tick, drop repeated seq, write the depth dataset or Kafka')
    .description(
      "Polls the latest order book of every code at the plan's pace (or --interval-ms, never faster), drops ticks " +
        'whose seq did not advance, and writes the rest to DIR/depth/ and/or the Kafka topic P.depth. Runs until ' +
        '--duration seconds pass or SIGINT/SIGTERM, then flushes and exits 0.',
    );
  addCodesOptions(cmd);
  cmd
    .option('--interval-ms <ms>', 'poll interval (never below what the plan allows)', intAtLeast(1))
    .option('--out <dir>', 'dataset directory or s3://bucket/prefix')
    .addOption(
      new Option('--format <format>', 'file format').choices(DATASET_FORMAT_CHOICES).default('parquet'),
    )
    .option('--kafka <brokers>', 'produce to Kafka (host:port,...)')
    .option('--topic-prefix <prefix>', 'Kafka topic prefix', 'quoteflow')
    .option('--schema-registry <url>', SCHEMA_REGISTRY_HELP)
    .option('--duration <seconds>', 'stop after this many seconds', intAtLeast(1))
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics, /health and /ready on 127.0.0.1:PORT',
      intAtLeast(0),
    )
    .option('--wait-for-writer', WAIT_FOR_WRITER_HELP);
  addUpkeepOptions(cmd);
  addKafkaConnectionOptions(cmd);
  addServiceOptions(cmd).action((flags: DepthFlags) => runDepth(ctx, flags));
}

/** One `quoteflow depth` run: its flags checked, the Kafka check, the capture until its stop. */
async function runDepth(ctx: CommandContext, flags: DepthFlags): Promise<void> {
  const service = await resolveServiceOptions(flags, ctx.io.env);
  const codes = await resolveCodes(flags, ctx.io.cwd);
  const upkeep = resolveUpkeep(flags);
  const connection = await resolveKafkaConnection(flags, ctx.io, ctx.redactor);
  const schemaRegistry = await schemaRegistryFlag(flags, connection, ['depth'], ctx.io.env);
  const kafka = connection === undefined ? undefined : { ...connection, schemaRegistry };
  if (flags.out === undefined && kafka === undefined) throw new UsageError('--out or --kafka is required');
  if (flags.out !== undefined) await checkOutDir(flags.out, ctx.io.cwd, '--out', ['depth']);
  const statusEveryMs = statusIntervalMs(ctx.io.env);
  const [
    { depthCapture },
    { createClient },
    { checkKafka, cliKafkaSinkOptions },
    { CliMetrics, metricsHost, serveMetrics },
  ] = await Promise.all([
    import('@quoteflow/pipelines'),
    import('../internal/create-client.js'),
    import('../internal/check-kafka.js'),
    import('../internal/cli-metrics.js'),
  ]);
  const metrics = flags.metricsPort === undefined ? undefined : new CliMetrics(metricsHost(ctx.io.env));
  const client = createClient(service, ctx.logger, metrics, undefined, undefined, metrics?.startOnAnswer);
  if (metrics !== undefined) await serveMetrics(metrics, client, flags.metricsPort ?? 0, ctx.logger);
  const stop = commandStopper(ctx, flags.duration, describeSinks({ out: flags.out, kafka }));
  const stopper = stop.controller;
  let ticks = 0;
  const ticker = new StatusTicker(ctx.status, statusEveryMs, () => ({ ticks }));
  const { commandBudgetWatch } = await import('../internal/daily-budget-watch.js');
  let budget: { stop(): void; rethrow(): void } | undefined;
  try {
    budget = commandBudgetWatch(client, service, ctx.logger, stopper, (f, on) => metrics?.setFault(f, on));
    if (kafka !== undefined)
      await checkKafka(kafka, {
        timeoutMs: sinkConnectTimeoutMs(flags.duration, ctx.io.env),
        signal: ctx.signal,
        topics: ['depth'],
      });
    const capture = depthCapture({
      client,
      codes,
      signal: stopper.signal,
      onTick: () => void ticks++,
      ...(flags.intervalMs === undefined ? {} : { intervalMs: flags.intervalMs }),
      ...filesOf(ctx, flags, upkeep, metrics),
      ...(kafka === undefined ? {} : { kafka: cliKafkaSinkOptions(kafka, ctx.io.env) }),
      onWarning: (message, error) =>
        ctx.logger.warn({ err: error instanceof Error ? error.message : error }, message),
    });
    ctx.logger.info({ codes: codes.length }, 'depth capture started');
    const summary = await capture.done;
    budget.rethrow();
    ctx.logger.info(
      {
        polls: summary.polls,
        ticks: summary.ticks,
        repeated: summary.repeated,
        files: summary.fileCount,
      },
      'depth capture stopped: sinks flushed',
    );
  } finally {
    budget?.stop();
    ticker.stop();
    stop.dispose();
    await client.close();
    await metrics?.close();
  }
}

/** The capture's files sink: the depth table under `--out`, its codes claimed there first. */
function filesOf(
  ctx: CommandContext,
  flags: DepthFlags,
  upkeep: ReturnType<typeof resolveUpkeep>,
  metrics: CliMetrics | undefined,
) {
  if (flags.out === undefined) return {};
  return {
    files: {
      dir: datasetDir(ctx.io.cwd, flags.out),
      format: flags.format,
      ifOwned: flags.waitForWriter === true ? ('wait' as const) : ('fail' as const),
      command: 'quoteflow depth',
      ...writerUpkeepOf(upkeep, ctx.logger, metrics),
    },
  };
}
