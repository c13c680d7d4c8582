import { PipelineError, type IncompleteSeries, type KlineSyncEvent } from '@quoteflow/pipelines';
import type { CommandContext } from '../command-context.js';

/** Series named one by one on stderr; past that, a count. */
const NAMED = 20;

/**
 * The series a K-line run ended short of their N bars (`backfill-incomplete` events), said once at
 * the end on stderr: per series what its sinks hold of what was asked, and why the run ended.
 */
export class Shortfalls {
  readonly #series = new Map<string, IncompleteSeries>();

  note(e: KlineSyncEvent): void {
    if (e.type !== 'backfill-incomplete') return;
    const { code, klineType, held, wanted } = e;
    this.#series.set(`${code}:${klineType}`, { code, klineType, held, wanted });
  }

  get count(): number {
    return this.#series.size;
  }

  /**
   * Says what is still lacking. A stop by `--duration` with bars lacking is not a success: it
   * throws (exit 1) once said; a stop by a signal (the user's) is a warning; a failure is the
   * failure's own error, after this.
   */
  report(ctx: CommandContext, why: 'duration' | 'stopped' | 'failed'): void {
    if (this.#series.size === 0) return;
    const all = [...this.#series.values()];
    const lacking = all.reduce((n, s) => n + (s.wanted - s.held), 0);
    const cause = {
      duration: '--duration ended the run',
      stopped: 'the run was stopped',
      failed: 'the run failed',
    }[why];
    const message = `${cause} before the backfill completed: ${all.length} series still lack ${lacking} bars (what was read is committed; run the command again to fetch the rest)`;
    ctx.logger.warn(
      {
        series: all.slice(0, NAMED).map((s) => `${s.code}:${s.klineType} holds ${s.held} of ${s.wanted}`),
        count: all.length,
        lackingBars: lacking,
      },
      message,
    );
    if (why === 'duration') throw new PipelineError('QF_PIPELINE', message);
  }
}
