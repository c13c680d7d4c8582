import { QuoteflowError, type ErrorCode } from '@quoteflow/core';

/** Stable codes of {@link ClusterError}. */
export const CLUSTER_ERROR_CODES = [
  'QF_INVALID_OPTION',
  'QF_REDIS',
  'QF_REDIS_UNREACHABLE',
] as const satisfies readonly ErrorCode[];
export type ClusterErrorCode = (typeof CLUSTER_ERROR_CODES)[number];

/**
 * A failure of the cluster layer: a bad option (`QF_INVALID_OPTION`, thrown when built), a Redis
 * answer that cannot be used (`QF_REDIS`, retryable: the component retries on its own while Redis is away), or Redis not
 * answering at all when a worker starts (`QF_REDIS_UNREACHABLE`, see `ClusterWorker.connect`). Messages
 * never carry the token or the Redis URL's password.
 */
export class ClusterError extends QuoteflowError {
  declare readonly code: ClusterErrorCode;
  constructor(
    code: ClusterErrorCode,
    message: string,
    options: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super(code, message, options);
  }
}
