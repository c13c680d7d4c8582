/**
 * Error raised when an operator's options (or a value it cannot interpret) are invalid. It has the
 * shape of core's `QuoteflowError` family (`code`, `retryable`, `option`) so callers can branch on
 * `err.code === 'QF_INVALID_OPTION'`.
 */
export class OperatorOptionError extends Error {
  readonly code = 'QF_INVALID_OPTION' as const;
  readonly retryable = false;
  /** The option's name, as the caller wrote it. */
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.option = option;
  }
}

/** Throws an {@link OperatorOptionError} naming `option`. */
export function invalidOption(option: string, message: string): never {
  throw new OperatorOptionError(option, message);
}
