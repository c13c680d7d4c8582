import { InvalidOptionError } from '../errors.js';

/** Checks a code list for one request, throwing an {@link InvalidOptionError} naming the problem. */
export function checkCodeList(codes: readonly string[], maxCodes: number, what: string): void {
  if (codes.length === 0) throw new InvalidOptionError('codes', `${what}: "codes" must not be empty`);
  if (codes.length > maxCodes) {
    throw new InvalidOptionError(
      'codes',
      `${what}: at most ${maxCodes} codes per request on this plan (the service cuts the rest silently), got ${codes.length}`,
    );
  }
  codes.forEach((code, i) => {
    if (typeof code !== 'string' || code === '')
      throw new InvalidOptionError(
        `codes[${i}]`,
        `${what}: "codes[${i}]" must be a non-empty string, got ${JSON.stringify(code)}`,
      );
  });
}
