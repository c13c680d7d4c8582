/**
 * Bad usage or configuration: exit code 2. The message names the flag or field at fault and what
 * it expects; it is thrown before anything is written.
 */
export class UsageError extends Error {
  readonly code = 'QF_USAGE';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
