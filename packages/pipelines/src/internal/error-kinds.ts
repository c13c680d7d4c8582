import { isQuoteflowError, UnreachableServiceError } from '@quoteflow/core/internal';
import type { ErrorCode } from '@quoteflow/core';

/** Codes of failures that polling again cannot fix (see {@link isFatal}). */
const FATAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'QF_UNAUTHORIZED_TOKEN',
  'QF_INVALID_CODE',
  'QF_UNAUTHORIZED_CODE',
  'QF_INVALID_OPTION',
  'QF_TOO_MANY_PRODUCTS',
  'QF_BAD_REQUEST',
]);

/**
 * Errors that polling again cannot fix: a refused token, an unknown code, bad options, a service
 * that has never answered at its address (core's `UnreachableServiceError`: a wrong base URL).
 */
export function isFatal(err: unknown): boolean {
  return err instanceof UnreachableServiceError || (isQuoteflowError(err) && FATAL_CODES.has(err.code));
}

/** Whether `err` is the pipeline's own stop (its signal's reason, or an abort it caused). */
export function isAbort(err: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  if (err === signal.reason) return true;
  return isQuoteflowError(err, 'QF_ABORTED') || (err instanceof Error && err.name === 'AbortError');
}
