import { Option, type Command } from 'commander';
import type { DatasetFormat } from '@quoteflow/sinks';
import { DATASET_FORMAT_CHOICES } from '../internal/choices.js';
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
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { WAIT_FOR_WRITER_HELP } from '../internal/wait-for-writer-option.js';

interface BackfillFlags extends KlineTypesFlags {
  codes?: string[];
  codesFile?: string;
  bars: number;
  out: string;
  format: DatasetFormat;
  metricsPort?: number;
  retryBudget: number;
  requestLog?: boolean;
  waitForWriter?: boolean;
  baseUrl?: string;
  token?: string;
  plan?: string;
}

/** `quoteflow backfill`: history through `/kline` into the kline dataset, then exit. */
export function registerBackfillCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('backfill')
    .summary('history through /kline into the kline dataset, then exit')
    .description(
      'Writes the N most recent closed bars per code (the forming bar is not counted or written) into DIR/kline/, ' +
        'paging backwards where the product class allows it (forex, metals, crypto). The other codes (stocks, indices, ' +
        'energy, commodities) reach one page (499 closed bars): the command writes what exists, says so on stderr, and exits 0. Pages are committed as they ' +
        'arrive; the unexplained gaps of the dataset (a lost file) are refetched first where the service still serves them.',
    );
  addCodesOptions(cmd);
  addKlineTypesOptions(cmd)
    .requiredOption('--bars <n>', 'closed bars per code', intAtLeast(1))
    .requiredOption('--out <dir>', 'dataset directory or s3://bucket/prefix')
    .addOption(
      new Option('--format <format>', 'file format').choices(DATASET_FORMAT_CHOICES).default('parquet'),
    )
    .option('--metrics-port <port>', 'serve Prometheus metrics on 127.0.0.1:PORT', intAtLeast(0))
    .option(
      '--retry-budget <seconds>',
      'retry a failing request (5xx, dropped connection, truncated answer, timeout) with backoff for this long ' +
        'before the command fails; pages already read stay committed',
      intAtLeast(0),
      300,
    )
    .option(
      '--request-log',
      'log every request into OUT/_requests/ (quoteflow report draws the quota from it)',
    )
    .option('--wait-for-writer', WAIT_FOR_WRITER_HELP);
  addServiceOptions(cmd).action(async (flags: BackfillFlags) => {
    const klineTypes = resolveKlineTypes(flags);
    const service = await resolveServiceOptions(flags, ctx.io.env);
    const codes = await resolveCodes(flags, ctx.io.cwd);
    const { checkKlineTypes } = await import('../internal/check-kline-types.js');
    checkKlineTypes(codes, klineTypes, klineTypesFlag(flags));
    await checkOutDir(flags.out, ctx.io.cwd, '--out', ['kline']);
    const { runKlineSync } = await import('../internal/run-kline-sync.js');
    await runKlineSync(ctx, {
      service,
      codes,
      klineTypes,
      bars: flags.bars,
      out: flags.out,
      format: flags.format,
      live: false,
      // A backfill ends when its history is in: the table's upkeep is for commands that keep
      // running (sync, run); `quoteflow compact` compacts after a backfill.
      upkeep: false,
      metricsPort: flags.metricsPort,
      retryBudgetS: flags.retryBudget,
      requestLog: flags.requestLog,
      waitForWriter: flags.waitForWriter,
    });
  });
}
