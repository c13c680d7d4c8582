import { Option, type Command } from 'commander';
import type { TableUpkeepOptions } from '@quoteflow/sinks';
import { parseDuration } from './duration.js';
import { intAtLeast } from './parse-args.js';
import { UsageError } from './usage-error.js';

/** The table upkeep flags of a long-running command's dataset, as commander hands them over. */
export interface UpkeepFlags {
  /** `--no-upkeep` sets it false. */
  upkeep: boolean;
  upkeepRowsPerFile?: number;
  upkeepRetention?: string;
}

/** `--no-upkeep`, `--upkeep-rows-per-file`, `--upkeep-retention` (sync, depth, suspensions --watch). */
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
      "how long upkeep keeps files compaction removed (on s3://) and the log's older versions (time travel reaches back this far), e.g. 168h (default), 7d, 30m",
    );
}

/**
 * The upkeep of a command's dataset from its flags: `false` with `--no-upkeep` (exit 2 beside an
 * `--upkeep-*` flag), the options given, or `undefined` for the defaults.
 */
export function resolveUpkeep(flags: UpkeepFlags): false | TableUpkeepOptions | undefined {
  const tuned = flags.upkeepRowsPerFile !== undefined || flags.upkeepRetention !== undefined;
  if (!flags.upkeep) {
    if (tuned)
      throw new UsageError(
        `${flags.upkeepRowsPerFile !== undefined ? '--upkeep-rows-per-file' : '--upkeep-retention'} sets what --no-upkeep turns off: drop one of them`,
      );
    return false;
  }
  if (!tuned) return undefined;
  const retentionMs = flags.upkeepRetention === undefined ? undefined : parseDuration(flags.upkeepRetention);
  if (flags.upkeepRetention !== undefined && retentionMs === undefined)
    throw new UsageError(
      `--upkeep-retention must be a duration such as 168h, 7d, 30m or 0s, got ${JSON.stringify(flags.upkeepRetention)}`,
    );
  return {
    ...(flags.upkeepRowsPerFile === undefined ? {} : { rowsPerFile: flags.upkeepRowsPerFile }),
    ...(retentionMs === undefined ? {} : { retentionMs }),
  };
}
