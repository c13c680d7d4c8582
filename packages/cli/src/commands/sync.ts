import { Option, type Command } from 'commander';
import type { DatasetFormat, KafkaDelivery } from '@quoteflow/sinks';
import { DATASET_FORMAT_CHOICES, KAFKA_DELIVERY_CHOICES } from '../internal/choices.js';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { intAtLeast } from '../internal/parse-args.js';
import {
  addKlineTypesOptions,
  klineTypesFlag,
  resolveKlineTypes,
  type KlineTypesFlags,
} from '../internal/kline-types-options.js';
import { checkOutDir } from '../internal/check-out-dir.js';
import { addUpkeepOptions, resolveUpkeep, type UpkeepFlags } from '../internal/upkeep-options.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { UsageError } from '../internal/usage-error.js';
import { WAIT_FOR_WRITER_HELP } from '../internal/wait-for-writer-option.js';
import { SCHEMA_REGISTRY_HELP, schemaRegistryFlag } from '../internal/schema-registry-option.js';
import {
  addKafkaConnectionOptions,
  resolveKafkaConnection,
  type KafkaConnectionFlags,
} from '../internal/kafka-options.js';

interface SyncFlags extends KafkaConnectionFlags, KlineTypesFlags, UpkeepFlags {
  codes?: string[];
  codesFile?: string;
  bars: number;
  out: string;
  format: DatasetFormat;
  kafka?: string;
  topicPrefix: string;
  schemaRegistry?: string;
  kafkaDelivery?: KafkaDelivery;
  kafkaTransactionalId?: string;
  duration?: number;
  state?: string;
  redis?: string;
  metricsPort?: number;
  requestLog?: boolean;
  checkpointMs?: number;
  waitForWriter?: boolean;
  baseUrl?: string;
  token?: string;
  plan?: string;
}

/** `quoteflow sync`: backfill, then keep the dataset current through `/batch-kline`. */
export function registerSyncCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('sync')
    .summary('backfill, then keep the kline dataset current through /batch-kline')
    .description(
      'Backfills N closed bars per (code, kline type) through /kline at backfill priority, then polls /batch-kline ' +
        "at the plan's refresh period (groups packed to the plan's cap), merging bars: closed bars go to DIR/kline " +
        'exactly once, forming and closed bars to Kafka when asked. Runs until --duration seconds pass or ' +
        'SIGINT/SIGTERM, then flushes every sink, writes the state and exits 0. Each page of history is committed ' +
        'as it arrives: a stop during the backfill keeps what was read and says per series what is still lacking ' +
        '(the next run fetches only the rest). A code the service ' +
        'stops serving while it runs is dropped with a warning and the others go on. With --state, a ' +
        'restart backfills the gap first: no gap, no duplicate.',
    );
  addCodesOptions(cmd);
  addKlineTypesOptions(cmd)
    .requiredOption('--bars <n>', 'closed bars of history per series on the first run', intAtLeast(0))
    .requiredOption('--out <dir>', 'dataset directory or s3://bucket/prefix')
    .addOption(
      new Option('--format <format>', 'file format').choices(DATASET_FORMAT_CHOICES).default('parquet'),
    )
    .option('--kafka <brokers>', 'also produce forming and closed bars to Kafka (host:port,...)')
    .option('--topic-prefix <prefix>', 'Kafka topic prefix', 'quoteflow')
    .option('--schema-registry <url>', SCHEMA_REGISTRY_HELP)
    .option('--duration <seconds>', 'stop after this many seconds', intAtLeast(1))
    .option('--state <file>', 'state file (last closed bar per series) for restarts')
    .option('--redis <url>', 'share the plan between several processes through Redis')
    .option('--metrics-port <port>', 'serve Prometheus metrics on 127.0.0.1:PORT', intAtLeast(0))
    .option(
      '--request-log',
      'log every request into OUT/_requests/ (quoteflow report draws the quota from it)',
    )
    .option('--wait-for-writer', WAIT_FOR_WRITER_HELP)
    .addOption(
      new Option('--checkpoint-ms <ms>', 'flush files and write state this often')
        .argParser(intAtLeast(100))
        .hideHelp(),
    );
  addUpkeepOptions(cmd);
  addKafkaDeliveryOptions(cmd);
  addKafkaConnectionOptions(cmd);
  addServiceOptions(cmd).action(async (flags: SyncFlags) => {
    const klineTypes = resolveKlineTypes(flags);
    const service = await resolveServiceOptions(flags, ctx.io.env);
    const codes = await resolveCodes(flags, ctx.io.cwd);
    const { checkKlineTypes } = await import('../internal/check-kline-types.js');
    checkKlineTypes(codes, klineTypes, klineTypesFlag(flags));
    const upkeep = resolveUpkeep(flags);
    if (flags.redis !== undefined && !/^rediss?:\/\//.test(flags.redis)) {
      throw new UsageError('--redis must be a redis:// or rediss:// URL');
    }
    const kafka = await syncKafkaOf(flags, ctx);
    await checkOutDir(flags.out, ctx.io.cwd, '--out', ['kline']);
    const { runKlineSync } = await import('../internal/run-kline-sync.js');
    await runKlineSync(ctx, {
      service,
      codes,
      klineTypes,
      bars: flags.bars,
      out: flags.out,
      format: flags.format,
      live: true,
      kafka,
      statePath: flags.state,
      durationS: flags.duration,
      metricsPort: flags.metricsPort,
      requestLog: flags.requestLog,
      checkpointMs: flags.checkpointMs,
      redis: flags.redis,
      upkeep,
      waitForWriter: flags.waitForWriter,
    });
  });
}

/** The sync's Kafka sink from its flags (connection, delivery, transactional id, registry), checked. */
async function syncKafkaOf(flags: SyncFlags, ctx: CommandContext) {
  const kafka = await resolveKafkaConnection(flags, ctx.io, ctx.redactor);
  if (kafka === undefined && (flags.kafkaDelivery ?? flags.kafkaTransactionalId) !== undefined)
    throw new UsageError('--kafka-delivery and --kafka-transactional-id need --kafka');
  if (flags.kafkaTransactionalId !== undefined && !/^[\x21-\x7e]{1,200}$/.test(flags.kafkaTransactionalId))
    throw new UsageError(
      '--kafka-transactional-id must be 1 to 200 printable ASCII characters without spaces',
    );
  const schemaRegistry = await schemaRegistryFlag(flags, kafka, ['kline'], ctx.io.env);
  return kafka === undefined
    ? undefined
    : {
        ...kafka,
        delivery: flags.kafkaDelivery,
        transactionalId: flags.kafkaTransactionalId,
        schemaRegistry,
      };
}

/** `--kafka-delivery` and `--kafka-transactional-id`: how the K-line records reach Kafka. */
function addKafkaDeliveryOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option(
        '--kafka-delivery <mode>',
        'exactly-once: each checkpoint (every second) one Kafka transaction, a read_committed consumer sees every final bar once, across kill -9; at-least-once: the idempotent producer, a final bar may repeat after a crash (dedupe on key + kline_type + ts) (default: exactly-once where the brokers run transactions)',
      ).choices(KAFKA_DELIVERY_CHOICES),
    )
    .option(
      '--kafka-transactional-id <id>',
      "stem of the Kafka sink's transactional id, stable across restarts of this sync (default: quoteflow.PREFIX.<hash of codes and kline types>; a worker of --redis adds its id)",
    );
}
