import { QuoteflowError, type ErrorCode } from '@quoteflow/core';

/** Stable codes of pipeline errors. */
export const PIPELINE_ERROR_CODES = [
  'QF_STATE',
  'QF_PIPELINE_CONFIG',
  'QF_PIPELINE',
] as const satisfies readonly ErrorCode[];
export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

/**
 * An error of a ready-made pipeline: `QF_STATE` (unreadable or foreign state file),
 * `QF_PIPELINE_CONFIG` (bad options), `QF_PIPELINE` (a stage failed; `cause` holds the stage's error).
 * Never retryable: a stage's own retries have run out when it arrives.
 */
export class PipelineError extends QuoteflowError {
  declare readonly code: PipelineErrorCode;
  constructor(code: PipelineErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(code, message, { cause: opts.cause });
  }
}
