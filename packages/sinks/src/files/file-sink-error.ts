import { QuoteflowError, type ErrorCode } from '@quoteflow/core';

/** Stable codes of the file sink's errors. */
export const FILE_SINK_ERROR_CODES = [
  'QF_INVALID_OPTION',
  'QF_FILE_WRITE',
  'QF_CLOSED',
  'QF_VALUE_OUT_OF_RANGE',
  'QF_FENCED',
  'QF_LOCKED',
  'QF_DATASET_LOG',
  'QF_OBJECT_STORE',
  'QF_CONFLICT',
  'QF_OWNED',
] as const satisfies readonly ErrorCode[];
export type FileSinkErrorCode = (typeof FILE_SINK_ERROR_CODES)[number];

/**
 * An error of the dataset writer: a bad option (`QF_INVALID_OPTION`, thrown by the constructor),
 * a file that could not be encoded or written (`QF_FILE_WRITE`, retryable: a disk may free up;
 * the cause is kept), a write after `close()` (`QF_CLOSED`), or a record whose value the
 * dataset's column type cannot hold exactly (`QF_VALUE_OUT_OF_RANGE`, thrown by `append`/`write`
 * before anything of the record is buffered: a depth `seq` outside uint64), or a file not committed
 * because the writer's `fence` said it may no longer write (`QF_FENCED`: another worker holds its
 * series now; its rows are not in the dataset), a dataset whose publish lock stayed held by a live
 * process (`QF_LOCKED`), or a dataset commit log that is malformed or names a file that is gone
 * (`QF_DATASET_LOG`), an object store (S3) that failed a request or does not enforce conditional
 * writes (`QF_OBJECT_STORE`), or a commit another writer's newer version conflicts with
 * (`QF_CONFLICT`: it removed files this one replaces), or a claim of series another live writer
 * of the table owns (`QF_OWNED`: it names the table, the series and that writer; a commit of
 * series another writer took over is `QF_FENCED`).
 */
export class FileSinkError extends QuoteflowError {
  declare readonly code: FileSinkErrorCode;
  constructor(code: FileSinkErrorCode, message: string, opts: { retryable?: boolean; cause?: unknown } = {}) {
    super(code, message, opts);
  }
}
