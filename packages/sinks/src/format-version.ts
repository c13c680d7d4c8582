/**
 * The quoteflow format version: one number for everything a release leaves behind for the next
 * one to continue, so that an older release meets a refusal, never a table, topic or state it
 * half understands.
 *
 * - 1: everything written before the version was recorded (no version anywhere);
 * - 2: the version is recorded (Delta tables: the table property `quoteflow.formatVersion`;
 *   K-line watermark records: `format_version`; sync state files: `formatVersion`), and a table's
 *   log may hold per-series ownership claims.
 *
 * A release reads and continues every format up to its own, and raises what it continues to its
 * own (a table's property at its first commit; records and state files as it writes them). The
 * next format change raises {@link QUOTEFLOW_FORMAT_VERSION}; {@link checkFormatVersion} is the one
 * check.
 */
import { QuoteflowError } from '@quoteflow/core';

/** The format this release writes, and the newest it reads. */
export const QUOTEFLOW_FORMAT_VERSION = 2;

/** The format of what carries no version: written before versions were recorded. */
export const UNVERSIONED_FORMAT = 1;

/** The Delta table property (`metaData.configuration`) holding a table's format version. */
export const FORMAT_VERSION_PROPERTY = 'quoteflow.formatVersion';

/**
 * A table, topic or state file written in a newer quoteflow format than this release's
 * (`QF_FORMAT_VERSION`, never retryable): the message names what, its version and this release's.
 * The CLI exits 2 on it, before any request.
 */
export class FormatVersionError extends QuoteflowError {
  /** Always `QF_FORMAT_VERSION`; never retryable: only a newer release continues it. */
  declare readonly code: 'QF_FORMAT_VERSION';
  /** The version found (`NaN` when it was not a version at all). */
  readonly found: number;
  /** This release's version ({@link QUOTEFLOW_FORMAT_VERSION}). */
  readonly supported: number = QUOTEFLOW_FORMAT_VERSION;
  constructor(
    /** What carries the version: `the kline table at DIR`, `kafka topic P.kline.watermarks`, … */
    readonly what: string,
    found: number,
    raw: unknown,
  ) {
    super(
      'QF_FORMAT_VERSION',
      Number.isNaN(found)
        ? `${what} says quoteflow format version ${JSON.stringify(raw)}, which is not a version; this release writes format version ${QUOTEFLOW_FORMAT_VERSION}`
        : `${what} was written in quoteflow format version ${found}, newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}: upgrade quoteflow to continue it`,
    );
    this.found = found;
  }
}

/**
 * The format version `raw` states (a number, or a table property's string; absent:
 * {@link UNVERSIONED_FORMAT}), refused with a {@link FormatVersionError} naming `what` when it is
 * newer than {@link QUOTEFLOW_FORMAT_VERSION} or not a version.
 *
 * @example
 * ```ts
 * checkFormatVersion('state file "sync.json"', parsed.formatVersion); // 1 or 2, else throws
 * ```
 */
export function checkFormatVersion(what: string, raw: unknown): number {
  if (raw === undefined || raw === null) return UNVERSIONED_FORMAT;
  const found = typeof raw === 'number' || (typeof raw === 'string' && /^\d+$/.test(raw)) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(found) || found < 1) throw new FormatVersionError(what, NaN, raw);
  if (found > QUOTEFLOW_FORMAT_VERSION) throw new FormatVersionError(what, found, raw);
  return found;
}
