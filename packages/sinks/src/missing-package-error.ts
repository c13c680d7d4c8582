import { QuoteflowError } from '@quoteflow/core';

/**
 * A part of `@quoteflow/sinks` was used whose library is not installed. The Kafka clients, the
 * AWS SDK, the schema registry client and the Parquet and Arrow libraries are optional peer
 * dependencies: a project installs only those of the parts it uses, and the first use of a part
 * without them throws this (from the constructor or `open()`, before any request or file). The
 * message names the part, the missing packages and the command that installs them.
 */
export class MissingPackageError extends QuoteflowError {
  /** The stable code: `QF_MISSING_PACKAGE`. Never retryable: installing the packages is the fix. */
  declare readonly code: 'QF_MISSING_PACKAGE';
  /** What needs them, e.g. `datasets (Parquet, Arrow IPC, NDJSON and their Delta log)`. */
  readonly feature: string;
  /** The packages not installed, each with the version range this release supports. */
  readonly packages: readonly { readonly name: string; readonly range: string }[];

  constructor(feature: string, packages: readonly { readonly name: string; readonly range: string }[]) {
    const names = packages.map((p) => p.name);
    const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
    const install = packages.map((p) => `${p.name}@${p.range}`).join(' ');
    super(
      'QF_MISSING_PACKAGE',
      `@quoteflow/sinks: ${feature} ${names.length === 1 ? 'needs' : 'need'} ${list}, not installed: add ${names.length === 1 ? 'it' : 'them'} to your project (npm install ${install})`,
    );
    this.feature = feature;
    this.packages = packages;
  }
}
