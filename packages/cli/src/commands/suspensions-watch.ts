import type { Exchange } from '@quoteflow/core';
import { suspensionWatch } from '@quoteflow/pipelines';
import { suspensionMessageValue } from '@quoteflow/sinks/internal';
import type { CommandContext } from '../command-context.js';
import { createClient } from '../internal/create-client.js';
import { commandBudgetWatch } from '../internal/daily-budget-watch.js';
import { commandStopper } from '../internal/command-stopper.js';
import { suspensionSlotNotice } from '../internal/slot-notice.js';
import { CliMetrics, metricsHost, serveMetrics } from '../internal/cli-metrics.js';
import { checkOutDir, datasetDir } from '../internal/check-out-dir.js';
import type { ServiceOptions } from '../internal/service-options.js';
import { toJson } from '../internal/to-json.js';
import { checkKafka, cliKafkaSinkOptions } from '../internal/check-kafka.js';
import { schemaRegistryFlag } from '../internal/schema-registry-option.js';
import { resolveKafkaConnection, type KafkaConnectionFlags } from '../internal/kafka-options.js';
import { sinkConnectTimeoutMs } from '../internal/sink-connect-timeout.js';
import { describeSinks } from '../internal/stop-waits.js';
import { StreamingTable } from '../internal/streaming-table.js';
import type { resolveUpkeep } from '../internal/upkeep-options.js';
import { writerUpkeepOf } from '../internal/upkeep-log.js';
import { suspensionColumns } from './suspensions.js';

/** `quoteflow suspensions --watch`: new and changed records to stdout, files and/or Kafka. */
export async function watchSuspensions(
  ctx: CommandContext,
  service: ServiceOptions,
  flags: KafkaConnectionFlags & {
    exchange: Exchange;
    format: 'table' | 'json' | 'ndjson';
    out?: string;
    topicPrefix: string;
    schemaRegistry?: string;
    duration?: number;
    metricsPort?: number;
    waitForWriter?: boolean;
  },
  /** `--no-upkeep`, `--upkeep-*`: the suspension table's upkeep. */
  upkeep: ReturnType<typeof resolveUpkeep>,
): Promise<void> {
  const connection = await resolveKafkaConnection(flags, ctx.io, ctx.redactor);
  const schemaRegistry = await schemaRegistryFlag(flags, connection, ['suspension'], ctx.io.env);
  const kafka = connection === undefined ? undefined : { ...connection, schemaRegistry };
  if (flags.out !== undefined) await checkOutDir(flags.out, ctx.io.cwd, '--out', ['suspension']);
  const notice = suspensionSlotNotice(ctx.logger);
  const metrics = flags.metricsPort === undefined ? undefined : new CliMetrics(metricsHost(ctx.io.env));
  const client = createClient(service, ctx.logger, metrics, undefined, undefined, (r) => {
    notice.onRequest(r);
    metrics?.startOnAnswer(r);
  });
  if (metrics !== undefined) await serveMetrics(metrics, client, flags.metricsPort ?? 0, ctx.logger);
  const stop = commandStopper(ctx, flags.duration, describeSinks({ out: flags.out, kafka }));
  const stopper = stop.controller;
  const table = new StreamingTable(suspensionColumns());
  let budget: { stop(): void; rethrow(): void } | undefined;
  try {
    budget = commandBudgetWatch(client, service, ctx.logger, stopper, (f, on) => metrics?.setFault(f, on));
    if (kafka !== undefined)
      await checkKafka(kafka, {
        timeoutMs: sinkConnectTimeoutMs(flags.duration, ctx.io.env),
        signal: ctx.signal,
        topics: ['suspension'],
      });
    const watch = suspensionWatch({
      client,
      exchanges: [flags.exchange],
      signal: stopper.signal,
      ...(flags.out === undefined
        ? {}
        : {
            files: {
              ...filesOf(ctx, flags.out, flags.waitForWriter),
              ...writerUpkeepOf(upkeep, ctx.logger, metrics),
            },
          }),
      ...(kafka === undefined ? {} : { kafka: cliKafkaSinkOptions(kafka, ctx.io.env) }),
      onChange: (c) => {
        if (c.change === 'removed') {
          ctx.logger.info({ symbol: c.record.symbol, key: c.key }, 'record left the service window');
          return;
        }
        // A stream: one record per line (json and ndjson alike), a table row for people.
        if (flags.format === 'table') ctx.out(table.row(c.record));
        else ctx.out(`${toJson({ change: c.change, ...suspensionMessageValue(c.record) })}\n`);
      },
      onWarning: (message, error) =>
        ctx.logger.warn({ err: error instanceof Error ? error.message : error }, message),
    });
    const summary = await watch.done;
    budget.rethrow();
    ctx.logger.info(
      { polls: summary.polls, changes: summary.changes, files: summary.fileCount },
      'watch stopped',
    );
  } finally {
    budget?.stop();
    notice.stop();
    await metrics?.close();
    stop.dispose();
    await client.close();
  }
}

/** The watch's files sink: the suspension table under `--out`, its exchange claimed there first. */
function filesOf(ctx: CommandContext, out: string, waitForWriter: boolean | undefined) {
  return {
    dir: datasetDir(ctx.io.cwd, out),
    ifOwned: waitForWriter === true ? ('wait' as const) : ('fail' as const),
    command: 'quoteflow suspensions --watch',
  };
}
