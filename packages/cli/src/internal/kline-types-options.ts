import type { Command } from 'commander';
import type { KlineType } from '@quoteflow/core';
import { KLINE_TYPE_HELP } from './choices.js';
import { klineTypeList } from './parse-args.js';
import { UsageError } from './usage-error.js';

/** What {@link addKlineTypesOptions} parses: either spelling, each a list. */
export interface KlineTypesFlags {
  klineTypes?: KlineType[];
  klineType?: KlineType[];
}

/**
 * Adds `--kline-types <list>` and its singular spelling `--kline-type <list>` to a command: every
 * command that takes kline types takes both (one kline type is a list of one), so a user who
 * remembers the other command's spelling is not told a flag is missing.
 */
export function addKlineTypesOptions(cmd: Command): Command {
  return cmd
    .option('--kline-types <list>', `kline types, comma-separated: ${KLINE_TYPE_HELP}`, klineTypeList)
    .option('--kline-type <list>', 'the same as --kline-types (one kline type or several)', klineTypeList);
}

/** The kline types of `--kline-types` or `--kline-type` (exactly one of them); a usage error otherwise. */
export function resolveKlineTypes(flags: KlineTypesFlags): KlineType[] {
  if (flags.klineTypes !== undefined && flags.klineType !== undefined)
    throw new UsageError('--kline-types and --kline-type are one flag spelt two ways; give one');
  const types = flags.klineTypes ?? flags.klineType;
  if (types === undefined) throw new UsageError('--kline-types (or --kline-type) is required');
  return types;
}

/** The spelling the user gave, for messages about the kline types (`--kline-type 7: …`). */
export function klineTypesFlag(flags: KlineTypesFlags): string {
  return flags.klineType !== undefined ? '--kline-type' : '--kline-types';
}
