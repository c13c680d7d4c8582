import type {
  DatasetFormat,
  IfOwned,
  TableUpkeepOptions,
  UpkeepEvent,
  WriteDatasetOptions,
} from '@quoteflow/sinks';

/** Where a depth capture or a suspension watch writes its dataset, and how it shares the table. */
export interface PipelineFilesOptions {
  /** The dataset root `DIR` (or `s3://bucket/prefix`). */
  readonly dir: string;
  /** @defaultValue `'parquet'` */
  readonly format?: DatasetFormat;
  /** A file is finished this long after its first row (and on stop). @defaultValue 60,000 ms */
  readonly maxFileAgeMs?: number;
  /**
   * The pipeline claims its series (depth: the codes; suspensions: the exchanges) in the table
   * before its first poll. When another live writer owns one: `'fail'` (the pipeline rejects
   * with `QF_OWNED`, naming the table, the series and that writer, before any request), `'wait'`
   * until it stops or its lease runs out (said once to `onWarning`), or `'take-over'` (a
   * cluster's share). @defaultValue `'fail'`
   */
  readonly ifOwned?: IfOwned;
  /** Its claims lapse this long without a renewal, for writers on other machines. @defaultValue 300,000 ms */
  readonly leaseMs?: number;
  /** What the pipeline is (`quoteflow depth`), shown to another writer that meets its claims. */
  readonly command?: string;
  /**
   * The table kept healthy while the pipeline writes it (the dataset writer's `upkeep`: small
   * files merged in the background, Delta checkpoints, log retention, vacuum); `false` turns it
   * off. @defaultValue on, with `TABLE_UPKEEP_DEFAULTS`
   */
  readonly upkeep?: false | TableUpkeepOptions;
  /** Everything the table's upkeep reports (compactions, checkpoints, failures, falling behind). */
  readonly onUpkeep?: (event: UpkeepEvent) => void;
}

/** A pipeline's files options as the dataset writer's table-writer options. */
export function tableWriterOptions(
  files: PipelineFilesOptions,
  signal: AbortSignal,
  warn: (message: string, error: unknown) => void,
): Pick<
  WriteDatasetOptions,
  'dir' | 'maxFileAgeMs' | 'ifOwned' | 'leaseMs' | 'command' | 'signal' | 'onWaiting' | 'upkeep' | 'onUpkeep'
> {
  return {
    dir: files.dir,
    ...(files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: files.maxFileAgeMs }),
    ...(files.ifOwned === undefined ? {} : { ifOwned: files.ifOwned }),
    ...(files.leaseMs === undefined ? {} : { leaseMs: files.leaseMs }),
    ...(files.command === undefined ? {} : { command: files.command }),
    ...(files.upkeep === undefined ? {} : { upkeep: files.upkeep }),
    ...(files.onUpkeep === undefined ? {} : { onUpkeep: files.onUpkeep }),
    signal,
    onWaiting: (message) => warn(message, undefined),
  };
}
