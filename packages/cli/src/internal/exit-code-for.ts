import { CommanderError } from 'commander';
import type { ErrorCode } from '@quoteflow/core';
import { isQuoteflowError } from '@quoteflow/core/errors';
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * The exit status of every error code (contract.md: 2 bad usage or configuration, 3 the service
 * refused, 75 the daily budget spent, 1 anything else). A record over every {@link ErrorCode}, so
 * a new code does not compile until it has one; docs/reference.md's table of error codes shows it
 * (`test/error-registry.test.ts` holds the two together).
 */
export const EXIT_STATUS_OF_CODE = {
  QF_INVALID_OPTION: EXIT.usage,
  QF_SERVICE: EXIT.refused,
  QF_RATE_LIMITED: EXIT.refused,
  QF_UNAUTHORIZED_TOKEN: EXIT.refused,
  QF_INVALID_CODE: EXIT.refused,
  QF_UNAUTHORIZED_CODE: EXIT.refused,
  QF_TOO_MANY_PRODUCTS: EXIT.refused,
  QF_BODY_EMPTY: EXIT.refused,
  QF_BAD_REQUEST: EXIT.refused,
  QF_HTTP_STATUS: EXIT.failure,
  QF_NETWORK: EXIT.failure,
  QF_TIMEOUT: EXIT.failure,
  QF_DECODE: EXIT.failure,
  QF_MISSING_ITEMS: EXIT.failure,
  QF_ABORTED: EXIT.failure,
  QF_CLOSED: EXIT.failure,
  QF_BUFFER_OVERFLOW: EXIT.failure,
  QF_STATE: EXIT.usage,
  QF_PIPELINE_CONFIG: EXIT.usage,
  QF_PIPELINE: EXIT.failure,
  QF_FILE_WRITE: EXIT.failure,
  QF_VALUE_OUT_OF_RANGE: EXIT.failure,
  QF_FENCED: EXIT.failure,
  QF_LOCKED: EXIT.failure,
  QF_CONFLICT: EXIT.failure,
  QF_OWNED: EXIT.failure,
  QF_DATASET_LOG: EXIT.failure,
  QF_OBJECT_STORE: EXIT.failure,
  // A table, topic or state file of a newer format: configuration (this release cannot use it).
  QF_FORMAT_VERSION: EXIT.usage,
  QF_MISSING_PACKAGE: EXIT.failure,
  QF_KAFKA_DELIVERY: EXIT.failure,
  QF_KAFKA_TRANSACTION: EXIT.failure,
  QF_KAFKA_WATERMARKS: EXIT.failure,
  QF_KAFKA_UNREACHABLE: EXIT.failure,
  QF_KAFKA_CLUSTER: EXIT.failure,
  QF_SCHEMA_REGISTRY: EXIT.failure,
  QF_REDIS: EXIT.failure,
  QF_REDIS_UNREACHABLE: EXIT.failure,
  QF_USAGE: EXIT.usage,
  QF_DAILY_BUDGET_SPENT: EXIT.budgetSpent,
} as const satisfies Record<ErrorCode, ExitCode>;

/** Walks `cause` chains: a refusal wrapped by a pipeline is still a refusal. */
function* chain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

/**
 * The exit code an error ends the CLI with: that of the first error along its `cause` chain whose
 * code says more than "failed" ({@link EXIT_STATUS_OF_CODE}), else 1.
 */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  for (const e of chain(err)) {
    if (!isQuoteflowError(e)) continue;
    const status: ExitCode = EXIT_STATUS_OF_CODE[e.code];
    if (status !== EXIT.failure) return status;
  }
  return EXIT.failure;
}
