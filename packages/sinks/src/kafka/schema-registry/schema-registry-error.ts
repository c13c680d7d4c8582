import { QuoteflowError } from '@quoteflow/core';

/**
 * The schema registry could not give a topic's schema an id: unreachable, credentials refused
 * (401), not allowed (403) with the schema not registered, or the schema refused as incompatible
 * (409). The message names the registry's URL (never credentials) and the subject.
 */
export class SchemaRegistryError extends QuoteflowError {
  /** The stable code: `QF_SCHEMA_REGISTRY`. Not retryable: the command fails before it writes. */
  declare readonly code: 'QF_SCHEMA_REGISTRY';
  /** The registry's URL, without credentials. */
  readonly url: string;
  /** The subject (`<topic>-value`). */
  readonly subject: string;
  /** The registry's HTTP status, when it answered. */
  readonly status: number | undefined;

  constructor(url: string, subject: string, reason: string, status?: number) {
    super('QF_SCHEMA_REGISTRY', `schema registry ${url}: subject ${subject}: ${reason}`);
    this.url = url;
    this.subject = subject;
    this.status = status;
  }
}
