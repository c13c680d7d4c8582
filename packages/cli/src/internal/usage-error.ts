import { QuoteflowError } from '@quoteflow/core/errors';

/**
 * Bad usage or configuration (`QF_USAGE`): exit code 2. The message names the flag or field at
 * fault and what it expects; it is thrown before anything is written.
 */
export class UsageError extends QuoteflowError {
  declare readonly code: 'QF_USAGE';
  constructor(message: string) {
    super('QF_USAGE', message);
  }
}
