import { UnreachableServiceError } from '@quoteflow/core';

/**
 * Errors that polling again cannot fix: a refused token, an unknown code, bad options, a service
 * that has never answered at its address (core's `UnreachableServiceError`: a wrong base URL).
 */
export function isFatal(err: unknown): boolean {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return (
    err instanceof UnreachableServiceError ||
    code === 'QF_UNAUTHORIZED_TOKEN' ||
    code === 'QF_INVALID_CODE' ||
    code === 'QF_UNAUTHORIZED_CODE' ||
    code === 'QF_INVALID_OPTION' ||
    code === 'QF_TOO_MANY_PRODUCTS' ||
    code === 'QF_BAD_REQUEST'
  );
}

/** Whether `err` is the pipeline's own stop (its signal's reason, or an abort it caused). */
export function isAbort(err: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  if (err === signal.reason) return true;
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return code === 'QF_ABORTED' || (err instanceof Error && err.name === 'AbortError');
}
