import {
  PipelineError,
  type DatasetRepair,
  type IncompleteSeries,
  type KlineSyncEvent,
} from '@quoteflow/pipelines';
import type { Logger } from 'pino';

/** Series named one by one on stderr; past that, a count. */
const NAMED = 20;

/**
 * What a K-line run ends without, said on stderr: the series short of their N bars
 * (`backfill-incomplete` events), per series what its sinks hold of what was asked and why the run
 * ended; and the codes it dropped because the service stopped serving them (`code-dropped`: a
 * warning and `quoteflow_codes_dropped_total` when it happens, a list at the end).
 */
export class Shortfalls {
  readonly #series = new Map<string, IncompleteSeries>();
  /** Codes a live run dropped (the service stopped serving them), with the refusal. */
  readonly #dropped = new Map<string, string>();

  constructor(private readonly logger: Logger) {}

  /** What the start repaired of the dataset's gaps, and what the service no longer serves. */
  #reportRepairs(repairs: readonly DatasetRepair[]): void {
    const repaired = repairs.reduce((n, r) => n + r.repaired, 0);
    const short = repairs.filter((r) => r.lacking > 0);
    this.logger.warn(
      {
        repairedBars: repaired,
        series: repairs.slice(0, NAMED).map((r) => `${r.code}:${r.klineType} +${r.repaired}`),
      },
      `repaired ${repaired} bars in ${repairs.filter((r) => r.repaired > 0).length} series of the dataset's gaps`,
    );
    if (short.length > 0)
      this.logger.warn(
        {
          series: short.slice(0, NAMED).map((r) => `${r.code}:${r.klineType} lacks ${r.lacking}`),
          count: short.length,
        },
        `${short.reduce((n, r) => n + r.lacking, 0)} bars of ${short.length} series cannot be repaired: the service no longer serves them (codes other than forex, precious metals and crypto reach only their latest page of 500)`,
      );
  }

  /** Which codes the run dropped. */
  #reportDropped(): void {
    if (this.#dropped.size === 0) return;
    const codes = [...this.#dropped.keys()];
    this.logger.warn(
      { codes: codes.slice(0, NAMED), count: codes.length },
      `${codes.length} code(s) dropped during the run because the service no longer serves them: ${codes.slice(0, NAMED).join(', ')}`,
    );
  }

  note(e: KlineSyncEvent): void {
    if (e.type === 'code-dropped') {
      this.#dropped.set(e.code, e.reason);
      this.logger.warn(
        { code: e.code, reason: e.reason },
        `the service no longer serves ${e.code}: dropped from the run, the other codes go on`,
      );
      return;
    }
    if (e.type === 'repaired') {
      this.#reportRepairs(e.repairs);
      return;
    }
    if (e.type !== 'backfill-incomplete') return;
    const { code, klineType, held, wanted } = e;
    this.#series.set(`${code}:${klineType}`, { code, klineType, held, wanted });
  }

  get count(): number {
    return this.#series.size;
  }

  /**
   * Says, at the end, the codes dropped and what is still lacking: a warning after a stop (by a
   * signal, or by `--duration`: exit 0 as the contract has it, exit 1 with `durationFails`), and
   * before the failure's own error after a failure.
   */
  report(why: 'duration' | 'stopped' | 'failed', durationFails = false): void {
    this.#reportDropped();
    if (this.#series.size === 0) return;
    const all = [...this.#series.values()];
    const lacking = all.reduce((n, s) => n + (s.wanted - s.held), 0);
    const cause = {
      duration: '--duration ended the run',
      stopped: 'the run was stopped',
      failed: 'the run failed',
    }[why];
    const message = `${cause} before the backfill completed: ${all.length} series still lack ${lacking} bars (what was read is committed; run the command again to fetch the rest)`;
    this.logger.warn(
      {
        series: all.slice(0, NAMED).map((s) => `${s.code}:${s.klineType} holds ${s.held} of ${s.wanted}`),
        count: all.length,
        lackingBars: lacking,
      },
      message,
    );
    if (why === 'duration' && durationFails) throw new PipelineError('QF_PIPELINE', message);
  }
}
