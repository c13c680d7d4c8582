/** Stable codes of pipeline errors. */
export const PIPELINE_ERROR_CODES = ['QF_STATE', 'QF_PIPELINE_CONFIG', 'QF_PIPELINE'] as const;
export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

/**
 * An error of a ready-made pipeline: `QF_STATE` (unreadable or foreign state file),
 * `QF_PIPELINE_CONFIG` (bad options), `QF_PIPELINE` (a stage failed; `cause` holds the stage's error).
 */
export class PipelineError extends Error {
  readonly code: PipelineErrorCode;
  constructor(code: PipelineErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
  }
}
