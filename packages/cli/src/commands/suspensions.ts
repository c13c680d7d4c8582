import { Option, type Command } from 'commander';
import type { Exchange, SuspensionRecord } from '@quoteflow/core';
import { EXCHANGE_CHOICES } from '../internal/choices.js';
import type { CommandContext } from '../command-context.js';
import { intAtLeast } from '../internal/parse-args.js';
import { renderTable, type Column } from '../internal/render-table.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { toJson } from '../internal/to-json.js';
import { SCHEMA_REGISTRY_HELP } from '../internal/schema-registry-option.js';
import { addKafkaConnectionOptions, type KafkaConnectionFlags } from '../internal/kafka-options.js';
import { UsageError } from '../internal/usage-error.js';
import { WAIT_FOR_WRITER_HELP } from '../internal/wait-for-writer-option.js';
import { addUpkeepOptions, resolveUpkeep, type UpkeepFlags } from '../internal/upkeep-options.js';

interface SuspensionsFlags extends KafkaConnectionFlags, UpkeepFlags {
  exchange: Exchange;
  format: 'table' | 'json' | 'ndjson';
  watch?: boolean;
  out?: string;
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

/** `quoteflow suspensions`: one query printed, or `--watch` for new and changed records. */
export function registerSuspensionsCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('suspensions')
    .summary('suspension and resumption records of one exchange')
    .description(
      'Prints the last year of suspension and resumption records of one exchange, latest first. With --watch, polls ' +
        "(once a minute at most, the plan's limit) and emits only new or changed records, to stdout and to the " +
        'suspension dataset and/or Kafka topic when asked.',
    )
    .addOption(
      new Option('--exchange <exchange>', 'exchange').choices(EXCHANGE_CHOICES).makeOptionMandatory(),
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['table', 'json', 'ndjson']).default('table'),
    )
    .option('--watch', 'keep polling and emit new or changed records')
    .option(
      '--out <dir>',
      'with --watch: also write the suspension dataset under DIR (or s3://bucket/prefix)',
    )
    .option('--kafka <brokers>', 'with --watch: also produce to Kafka (host:port,...)')
    .option('--topic-prefix <prefix>', 'Kafka topic prefix', 'quoteflow')
    .option('--schema-registry <url>', `with --watch, ${SCHEMA_REGISTRY_HELP}`)
    .option('--duration <seconds>', 'with --watch: stop after this many seconds', intAtLeast(1))
    .option(
      '--metrics-port <port>',
      'with --watch: serve Prometheus metrics, /health and /ready on 127.0.0.1:PORT',
      intAtLeast(0),
    )
    .option('--wait-for-writer', `with --watch --out, ${WAIT_FOR_WRITER_HELP}`);
  addUpkeepOptions(cmd);
  addKafkaConnectionOptions(cmd);
  addServiceOptions(cmd).action(async (flags: SuspensionsFlags) => {
    const service = await resolveServiceOptions(flags, ctx.io.env);
    if (flags.watch !== true) {
      for (const [key, flag] of [
        ['out', '--out'],
        ['kafka', '--kafka'],
        ['schemaRegistry', '--schema-registry'],
        ['kafkaConfig', '--kafka-config'],
        ['kafkaProperty', '-X/--kafka-property'],
        ['duration', '--duration'],
        ['metricsPort', '--metrics-port'],
        ['waitForWriter', '--wait-for-writer'],
        ['upkeepRowsPerFile', '--upkeep-rows-per-file'],
        ['upkeepRetention', '--upkeep-retention'],
        ['upkeepLogRetention', '--upkeep-log-retention'],
      ] as const) {
        if (flags[key] !== undefined) throw new UsageError(`${flag} needs --watch`);
      }
      if (!flags.upkeep) throw new UsageError('--no-upkeep needs --watch');
    }
    const upkeep = resolveUpkeep(flags);
    if (flags.watch === true) {
      const { watchSuspensions } = await import('./suspensions-watch.js');
      await watchSuspensions(ctx, service, flags, upkeep);
      return;
    }
    const [{ openClient }, { suspensionSlotNotice }] = await Promise.all([
      import('../internal/create-client.js'),
      import('../internal/slot-notice.js'),
    ]);
    // JSON records are the suspension dataset's and Kafka value's: snake_case, as every JSON of quoteflow.
    const { suspensionMessageValue } = await import('@quoteflow/sinks/internal');
    const notice = suspensionSlotNotice(ctx.logger);
    const client = await openClient(service, ctx.logger, notice.onRequest).catch((err: unknown) => {
      notice.stop();
      throw err;
    });
    try {
      const records = await client.suspensions(flags.exchange, { signal: ctx.signal });
      printSuspensions(ctx, records, flags.format, suspensionMessageValue);
    } finally {
      notice.stop();
      await client.close();
    }
  });
}

/**
 * Prints records in the chosen format (json: one document; ndjson: a line each; table: for people),
 * a JSON record as `json` makes it.
 */
function printSuspensions(
  ctx: CommandContext,
  records: readonly SuspensionRecord[],
  format: SuspensionsFlags['format'],
  json: (r: SuspensionRecord) => unknown,
): void {
  if (format === 'json') {
    ctx.out(`${toJson(records.map(json), 2)}\n`);
  } else if (format === 'ndjson') {
    ctx.out(records.map((r) => `${toJson(json(r))}\n`).join(''));
  } else {
    ctx.out(renderSuspensionTable(records));
  }
}

/** The suspension table's columns, each with the width a watch keeps for it. */
export function suspensionColumns(): (Column<SuspensionRecord> & { readonly width: number })[] {
  const at = (ms: number | undefined): string =>
    ms === undefined ? '-' : new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
  return [
    { header: 'symbol', value: (r) => r.symbol, width: 10 },
    { header: 'name', value: (r) => r.symbolName ?? '-', width: 20 },
    { header: 'halt (UTC)', value: (r) => at(r.haltAtMs), width: 16 },
    { header: 'resume (UTC)', value: (r) => at(r.resumeAtMs), width: 16 },
    { header: 'published (UTC)', value: (r) => at(r.publishAtMs), width: 16 },
    { header: 'reason', value: (r) => (r.haltReason ?? '-').slice(0, 40), width: 40 },
  ];
}

function renderSuspensionTable(records: readonly SuspensionRecord[]): string {
  return renderTable(records, suspensionColumns());
}
