/**
 * Every stable error code of quoteflow, of every package: callers branch on `err.code`, which never
 * changes meaning between versions (a code is never renamed or reused), and the retry layer asks
 * only `err.retryable`. Codes live here, in one list, so that a new one is a reviewed line, every
 * package's errors are `QuoteflowError`s with a code the type checker knows, and the CLI's table of
 * exit statuses (a record over {@link ErrorCode}) cannot miss one.
 */
export const ERROR_CODES = [
  // The client and the service (@quoteflow/core).
  'QF_INVALID_OPTION',
  'QF_SERVICE',
  'QF_RATE_LIMITED',
  'QF_UNAUTHORIZED_TOKEN',
  'QF_INVALID_CODE',
  'QF_UNAUTHORIZED_CODE',
  'QF_TOO_MANY_PRODUCTS',
  'QF_BODY_EMPTY',
  'QF_BAD_REQUEST',
  'QF_HTTP_STATUS',
  'QF_NETWORK',
  'QF_TIMEOUT',
  'QF_DECODE',
  'QF_MISSING_ITEMS',
  'QF_ABORTED',
  'QF_CLOSED',
  'QF_BUFFER_OVERFLOW',
  // Ready-made pipelines (@quoteflow/pipelines).
  'QF_STATE',
  'QF_PIPELINE_CONFIG',
  'QF_PIPELINE',
  // Datasets on disk and S3 (@quoteflow/sinks).
  'QF_FILE_WRITE',
  'QF_VALUE_OUT_OF_RANGE',
  'QF_FENCED',
  'QF_LOCKED',
  'QF_CONFLICT',
  'QF_OWNED',
  'QF_DATASET_LOG',
  'QF_OBJECT_STORE',
  'QF_FORMAT_VERSION',
  'QF_MISSING_PACKAGE',
  // Kafka (@quoteflow/sinks).
  'QF_KAFKA_DELIVERY',
  'QF_KAFKA_TRANSACTION',
  'QF_KAFKA_WATERMARKS',
  'QF_KAFKA_UNREACHABLE',
  'QF_KAFKA_CLUSTER',
  'QF_SCHEMA_REGISTRY',
  // The cluster (@quoteflow/cluster).
  'QF_REDIS',
  'QF_REDIS_UNREACHABLE',
  // The command line (@quoteflow/cli).
  'QF_USAGE',
  'QF_DAILY_BUDGET_SPENT',
] as const;

/** A stable error code: one of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** What a code means and what its reader does about it: one line each, for docs/reference.md. */
export interface ErrorCodeDescription {
  /** What happened, in the user's terms. */
  readonly meaning: string;
  /** What to do about it (or that nothing needs doing, and why). */
  readonly action: string;
}

/**
 * The registry of {@link ERROR_CODES}: a description of each. A record over every code, so a code
 * added without one does not compile; `test/error-registry.test.ts` checks docs/reference.md's
 * table of error codes against it and the CLI's exit statuses.
 */
export const ERROR_CODE_DESCRIPTIONS = {
  QF_INVALID_OPTION: {
    meaning: 'an option or argument is invalid (thrown before any request or file)',
    action: 'fix the option the message names; it says what the option takes',
  },
  QF_SERVICE: {
    meaning: 'the service refused the request with a ret code of no other entry (5xx answers are retried)',
    action: "read the service's msg and trace in the message; ask the provider with the trace if it persists",
  },
  QF_RATE_LIMITED: {
    meaning: "the service answered 429: the plan's rate limit was hit",
    action:
      'none while retries last; otherwise let processes of one token share the state directory or --redis, or set a tighter --limit',
  },
  QF_UNAUTHORIZED_TOKEN: {
    meaning: 'the token is missing, unknown or expired (ret 401)',
    action: 'check QUOTEFLOW_TOKEN and the subscription',
  },
  QF_INVALID_CODE: {
    meaning: 'a product code does not exist (ret 600)',
    action: 'check the codes the message names; codes are case-sensitive',
  },
  QF_UNAUTHORIZED_CODE: {
    meaning: "the token's plan does not cover a product (ret 604)",
    action: 'drop the code, or use a plan that covers it (quoteflow plan)',
  },
  QF_TOO_MANY_PRODUCTS: {
    meaning: 'too many products in one request for the plan (ret 605)',
    action: 'lower codes-per-request or batch-kline.groups (--limit)',
  },
  QF_BODY_EMPTY: {
    meaning: 'the service found the request body empty (ret 601)',
    action: 'a quoteflow bug: report it with the trace',
  },
  QF_BAD_REQUEST: {
    meaning: "the service refused the request's JSON (ret 400)",
    action: 'an unsupported argument or a quoteflow bug: report it with the trace',
  },
  QF_HTTP_STATUS: {
    meaning: 'a non-2xx answer without a body quoteflow understands (408, 429 and 5xx are retried)',
    action: "check that the base URL is the service's (a proxy's error page answers so)",
  },
  QF_NETWORK: {
    meaning:
      'the connection failed (refused, reset, name not resolved); not retried when the service never answered',
    action: 'check the base URL, and that the service runs and is reachable from here',
  },
  QF_TIMEOUT: {
    meaning: 'no answer within the time an option allows (a request, a broker); retried',
    action: 'if it persists, raise the timeout the message names, or look at the far side',
  },
  QF_DECODE: {
    meaning: 'an answer did not match its schema (the message names the field); retried',
    action: 'if it persists the service changed: report the field and the trace',
  },
  QF_MISSING_ITEMS: {
    meaning: 'codes asked for did not come back after the bounded retries (what came back is kept)',
    action: 'check that the codes the message names are still served; a rerun asks again',
  },
  QF_ABORTED: {
    meaning: 'the caller stopped the work (an AbortSignal, an unsubscribe, SIGINT)',
    action: 'none: it is the stop that was asked for',
  },
  QF_CLOSED: {
    meaning: 'a client or sink was used after close()',
    action: 'make a new one for the work after the close',
  },
  QF_BUFFER_OVERFLOW: {
    meaning:
      'more values buffered than allowed: a consumer read slower than its source, or a broker did not acknowledge',
    action: 'read faster, or raise the limit the message names (maxBuffered, maxBufferedRecords)',
  },
  QF_STATE: {
    meaning: "a sync state file is unreadable, or another sync's",
    action: "point --state at this sync's file, or remove it to start over",
  },
  QF_PIPELINE_CONFIG: {
    meaning: "a pipeline's options are invalid (thrown before any request or file)",
    action: 'fix the option the message names',
  },
  QF_PIPELINE: {
    meaning: "a stage of a pipeline failed (the cause is the stage's error)",
    action: 'see the cause; what was committed stays, and a rerun continues from it',
  },
  QF_FILE_WRITE: {
    meaning: 'a dataset file could not be encoded or written (retryable: a disk may free up)',
    action: "check the directory's free space and permissions",
  },
  QF_VALUE_OUT_OF_RANGE: {
    meaning: "a record's value does not fit its dataset column exactly (a depth seq outside uint64)",
    action: 'report the record; nothing of it was written',
  },
  QF_FENCED: {
    meaning:
      'the writer may no longer write its series or transactional id: another worker or producer has them; nothing of the refused commit is visible',
    action: 'none for the data (the new owner continues it); restart the process to take part again',
  },
  QF_LOCKED: {
    meaning: "a dataset's publish lock stayed held by a live process",
    action: 'wait for the other process (a compact, a sync), or give it longer (--wait)',
  },
  QF_CONFLICT: {
    meaning: 'a commit is void: a newer version by another writer removed files it replaces',
    action: 'none: run it again (compaction does so itself)',
  },
  QF_OWNED: {
    meaning:
      'another live writer owns series of the table this writer claimed (the message names the table, the series and that writer)',
    action: "stop that writer first, or wait for it (--wait-for-writer, the library's ifOwned: 'wait')",
  },
  QF_DATASET_LOG: {
    meaning: "a dataset's commit log is malformed or names a file that is gone",
    action: 'run quoteflow inspect on it; restore the file or the log from a copy',
  },
  QF_OBJECT_STORE: {
    meaning: 'an object store (S3) failed a request, or does not enforce conditional writes',
    action: 'check the endpoint and credentials, and that the server answers 412 to If-None-Match: *',
  },
  QF_FORMAT_VERSION: {
    meaning: 'a table, topic or state file was written in a newer quoteflow format than this release reads',
    action: 'upgrade quoteflow to continue it',
  },
  QF_MISSING_PACKAGE: {
    meaning: 'a part of @quoteflow/sinks needs an optional library that is not installed',
    action: 'install the packages the message names (it gives the command)',
  },
  QF_KAFKA_DELIVERY: {
    meaning:
      'records were not acknowledged by the Kafka broker (the error lists them; their outcome is unknown)',
    action: 'check the broker; decide per record from the list (sending again may store some twice)',
  },
  QF_KAFKA_TRANSACTION: {
    meaning: 'a Kafka transaction could not be committed, redone until deliveryTimeoutMs',
    action: 'open the sink again (a rerun): it resumes from its committed watermarks',
  },
  QF_KAFKA_WATERMARKS: {
    meaning:
      'the watermark topic could not be read to its end (a transaction held open, no answer, a bad record)',
    action: "fence() a dead producer's transactional id, or raise watermarkReadTimeoutMs",
  },
  QF_KAFKA_UNREACHABLE: {
    meaning: 'a Kafka sink could not connect, initialise transactions or create its topics',
    action: 'check the brokers the message names, and that they run transactions',
  },
  QF_KAFKA_CLUSTER: {
    meaning:
      'the Kafka cluster failed the check before a pipeline starts (no answer, login, TLS, permission, missing topic)',
    action: 'fix what the message names: the address, the credentials, the ACL, or create the topic',
  },
  QF_SCHEMA_REGISTRY: {
    meaning: "the schema registry could not give a topic's schema an id (unreachable, 401, 403, 409)",
    action: "check the registry's URL and credentials, and the subject's compatibility",
  },
  QF_REDIS: {
    meaning: 'Redis gave an answer the cluster cannot use (retried while Redis is away)',
    action: 'check the Redis server the message names',
  },
  QF_REDIS_UNREACHABLE: {
    meaning: 'Redis did not answer when a cluster worker started',
    action: 'check --redis and that Redis runs',
  },
  QF_USAGE: {
    meaning: "a command's flags or configuration are wrong (checked before any request or file)",
    action: 'fix the flag or field the message names (quoteflow <command> --help)',
  },
  QF_DAILY_BUDGET_SPENT: {
    meaning: "the token's daily budget is spent and --exit-when-budget-spent asked to exit",
    action: 'run again after the reset the message names',
  },
} as const satisfies Record<ErrorCode, ErrorCodeDescription>;
