/** Stable codes of {@link SchedulerError}. */
export type SchedulerErrorCode = 'QF_INVALID_OPTION' | 'QF_SCHEDULER_CLOSED';

/**
 * A scheduler refusal: a bad option or a conflicting registration (`QF_INVALID_OPTION`, thrown at
 * construction), or a job that was still queued when the scheduler closed (`QF_SCHEDULER_CLOSED`,
 * through the job's rejected promise). Never retryable.
 */
export class SchedulerError extends Error {
  readonly code: SchedulerErrorCode;
  readonly retryable = false;
  constructor(code: SchedulerErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
