import { Option, type Command } from 'commander';
import type { KlineType } from '@quoteflow/core';
import type { DatasetFormat } from '@quoteflow/sinks';
import { DATASET_FORMAT_CHOICES, KLINE_TYPE_HELP } from '../internal/choices.js';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { intAtLeast, klineType } from '../internal/parse-args.js';
import { checkOutDir } from '../internal/check-out-dir.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';

interface BackfillFlags {
  codes?: string[];
  codesFile?: string;
  klineType: KlineType;
  bars: number;
  out: string;
  format: DatasetFormat;
  metricsPort?: number;
  retryBudget: number;
  requestLog?: boolean;
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
        'paging backwards where the product class allows it (forex, metals, crypto). Stock codes reach one page ' +
        '(499 closed bars): the command writes what exists, says so on stderr, and exits 0. Pages are committed as they ' +
        'arrive; the unexplained gaps of the dataset (a lost file) are refetched first where the service still serves them.',
    );
  addCodesOptions(cmd);
  cmd
    .requiredOption('--kline-type <k>', `kline type: ${KLINE_TYPE_HELP}`, klineType)
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
    );
  addServiceOptions(cmd).action(async (flags: BackfillFlags) => {
    const service = await resolveServiceOptions(flags, ctx.io.env);
    const codes = await resolveCodes(flags, ctx.io.cwd);
    const { checkKlineTypes } = await import('../internal/check-kline-types.js');
    checkKlineTypes(codes, [flags.klineType], '--kline-type');
    await checkOutDir(flags.out, ctx.io.cwd, '--out', ['kline']);
    const { runKlineSync } = await import('../internal/run-kline-sync.js');
    await runKlineSync(ctx, {
      service,
      codes,
      klineTypes: [flags.klineType],
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
    });
  });
}
