import { InvalidOptionError } from '@quoteflow/core';

/** Throws core's `InvalidOptionError` (`QF_INVALID_OPTION`) naming `option`. */
export function invalidOption(option: string, message: string): never {
  throw new InvalidOptionError(option, message);
}
