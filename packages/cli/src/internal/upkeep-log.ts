import type { Logger } from 'pino';
import type { TableUpkeepOptions, UpkeepEvent } from '@quoteflow/sinks';
import type { UpkeepMetrics } from './upkeep-metrics.js';

/**
 * Says what a dataset's table upkeep reports, to people: falling behind is a warning (and catching
 * up again a line), a failing step a warning the first time and at debug while it keeps failing
 * (it is tried at every checkpoint; the behind warning says when that lasts), the rest at debug.
 */
export class UpkeepLog {
  /** Steps whose failure was warned about and has not stopped since. */
  readonly #failing = new Set<string>();

  constructor(
    private readonly logger: Logger,
    /** Fields every line carries (a pipeline file's pipeline name). */
    private readonly fields: Record<string, unknown> = {},
  ) {}

  event(e: UpkeepEvent): void {
    const log = this.logger;
    switch (e.type) {
      case 'upkeep-behind': {
        const s = e.status;
        log.warn(
          {
            ...this.fields,
            dataset: s.dataset,
            mergesDue: s.mergesDue,
            versionsSinceCheckpoint: s.versionsSinceCheckpoint,
            pendingS: Math.round(s.pendingMs / 1000),
          },
          `table upkeep of ${s.dataset} is behind: work has been due for ${Math.round(s.pendingMs / 1000)} s (${s.mergesDue} merge(s) of small files, ${s.versionsSinceCheckpoint} version(s) since the last Delta checkpoint); reads slow down until it catches up`,
        );
        break;
      }
      case 'upkeep-caught-up':
        this.#failing.clear();
        log.info(
          { ...this.fields, dataset: e.status.dataset },
          `table upkeep of ${e.status.dataset} caught up`,
        );
        break;
      case 'upkeep-failed': {
        const key = `${e.dataset}:${e.step}`;
        const fields = { ...this.fields, dataset: e.dataset, step: e.step, err: e.error.message };
        const message = `table upkeep of ${e.dataset} failed to ${e.step} (tried again at the next checkpoint; the table stays correct)`;
        if (this.#failing.has(key)) log.debug(fields, message);
        else log.warn(fields, message);
        this.#failing.add(key);
        break;
      }
      case 'upkeep-status':
        break;
      case 'compaction-started':
        log.debug({ ...this.fields, ...e }, 'table upkeep: merging small files');
        break;
      default:
        // A step that succeeded: failures from here on are news again.
        this.#failing.clear();
        log.debug({ ...this.fields, ...e }, `table upkeep: ${e.type}`);
    }
  }
}

/**
 * A files sink's upkeep as `DatasetWriter` takes it (`depth`, `suspensions --watch`, `run`): the
 * options of the flags or the pipeline file, and its events said to people ({@link UpkeepLog})
 * and, when metrics are served, counted.
 */
export function writerUpkeepOf(
  upkeep: false | TableUpkeepOptions | undefined,
  logger: Logger,
  metrics: { readonly upkeep: UpkeepMetrics } | undefined,
  fields: Record<string, unknown> = {},
): { upkeep?: false | TableUpkeepOptions; onUpkeep: (e: UpkeepEvent) => void } {
  const log = new UpkeepLog(logger, fields);
  return {
    ...(upkeep === undefined ? {} : { upkeep }),
    onUpkeep: (e) => {
      log.event(e);
      metrics?.upkeep.onEvent(e);
    },
  };
}
