import {
  checkFormatVersion,
  FORMAT_VERSION_PROPERTY,
  QUOTEFLOW_FORMAT_VERSION,
} from '../../format-version.js';
import type { DeltaMetaData } from './delta-actions.js';

/** A table's format version (its `quoteflow.formatVersion` property), refused when newer than this release's. */
export function checkTableFormat(meta: DeltaMetaData | undefined, what: string): number {
  return checkFormatVersion(what, meta?.configuration[FORMAT_VERSION_PROPERTY]);
}

/** The table properties of a table of this release's format: `configuration` with its version set. */
export function withFormatVersion(configuration: Readonly<Record<string, string>>): Record<string, string> {
  return { ...configuration, [FORMAT_VERSION_PROPERTY]: String(QUOTEFLOW_FORMAT_VERSION) };
}

/**
 * The metadata that raises an older table to this release's format (same id, schema and
 * partitioning; the version property set), for the first commit this release makes to it; or
 * `undefined` when the table is at this release's format already.
 */
export function raisedMetaData(meta: DeltaMetaData): DeltaMetaData | undefined {
  if (meta.configuration[FORMAT_VERSION_PROPERTY] === String(QUOTEFLOW_FORMAT_VERSION)) return undefined;
  return { ...meta, configuration: withFormatVersion(meta.configuration) };
}
