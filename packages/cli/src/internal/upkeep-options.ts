import { Option, type Command } from 'commander';
import type { TableUpkeepOptions } from '@quoteflow/sinks';
import { durationFlag } from './duration.js';
import { intAtLeast } from './parse-args.js';
import { UsageError } from './usage-error.js';

/** The table upkeep flags of a long-running command's dataset, as commander hands them over. */
export interface UpkeepFlags {
  /** `--no-upkeep` sets it false. */
  upkeep: boolean;
  upkeepRowsPerFile?: number;
  upkeepRetention?: string;
  upkeepLogRetention?: string;
}

/** `--no-upkeep`, `--upkeep-rows-per-file`, `--upkeep-retention`, `--upkeep-log-retention` (sync, depth, suspensions --watch). */
export function addUpkeepOptions(cmd: Command): Command {
  return cmd
    .option(
      '--no-upkeep',
      "don't keep the dataset's tables healthy while writing (no background compaction, Delta checkpoints, log retention or vacuum; quoteflow compact does it by hand)",
    )
    .addOption(
      new Option(
        '--upkeep-rows-per-file <n>',
        "upkeep's full files: small files are merged into files of up to this many rows (default 4194304)",
      ).argParser(intAtLeast(1)),
    )
    .option(
      '--upkeep-retention <duration>',
      'how long upkeep keeps files compaction removed (on s3://), e.g. 168h (default), 7d, 30m',
    )
    .option(
      '--upkeep-log-retention <duration>',
      "how long upkeep keeps the log's older versions (time travel reaches back this far; readers list the log on every read): default 1h, or --upkeep-retention if shorter",
    );
}

/** The upkeep flags that tune it, by their option name. */
const TUNING_FLAGS = [
  ['upkeepRowsPerFile', '--upkeep-rows-per-file'],
  ['upkeepRetention', '--upkeep-retention'],
  ['upkeepLogRetention', '--upkeep-log-retention'],
] as const;

/**
 * The upkeep of a command's dataset from its flags: `false` with `--no-upkeep` (exit 2 beside an
 * `--upkeep-*` flag), the options given, or `undefined` for the defaults.
 */
export function resolveUpkeep(flags: UpkeepFlags): false | TableUpkeepOptions | undefined {
  const tuning = TUNING_FLAGS.find(([key]) => flags[key] !== undefined);
  if (!flags.upkeep) {
    if (tuning !== undefined)
      throw new UsageError(`${tuning[1]} sets what --no-upkeep turns off: drop one of them`);
    return false;
  }
  if (tuning === undefined) return undefined;
  const retentionMs =
    flags.upkeepRetention === undefined
      ? undefined
      : durationFlag('--upkeep-retention', flags.upkeepRetention);
  const logRetentionMs =
    flags.upkeepLogRetention === undefined
      ? undefined
      : durationFlag('--upkeep-log-retention', flags.upkeepLogRetention);
  return {
    ...(flags.upkeepRowsPerFile === undefined ? {} : { rowsPerFile: flags.upkeepRowsPerFile }),
    ...(retentionMs === undefined ? {} : { retentionMs }),
    ...(logRetentionMs === undefined ? {} : { logRetentionMs }),
  };
}
