import { DecodeError } from '../errors.js';
import type { EndpointKind } from '../plans.js';

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A decimal string as a finite number; a decode error naming `path` otherwise (never NaN). */
export function parseDecimal(text: string, endpoint: EndpointKind, path: () => string): number {
  if (DECIMAL.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  throw new DecodeError(
    endpoint,
    path(),
    `expected a decimal string, got ${JSON.stringify(text.slice(0, 40))}`,
  );
}

/** Like {@link parseDecimal}, but an empty string (a known upstream defect) gives `null`. */
export function parseDecimalOrNull(text: string, endpoint: EndpointKind, path: () => string): number | null {
  return text === '' ? null : parseDecimal(text, endpoint, path);
}

const INTEGER = /^\d{1,20}$/;

/** An unsigned decimal integer string as a bigint (a 64-bit sequence number). */
export function parseBigInt(text: string, endpoint: EndpointKind, path: () => string): bigint {
  if (INTEGER.test(text)) return BigInt(text);
  throw new DecodeError(
    endpoint,
    path(),
    `expected an unsigned integer string, got ${JSON.stringify(text.slice(0, 40))}`,
  );
}

/** Below this an epoch value is taken as seconds, at or above as milliseconds (1e11 s is year 5138, 1e11 ms is 1973). */
const MS_THRESHOLD = 1e11;

/** An epoch timestamp string in seconds (or, tolerated, milliseconds) as epoch milliseconds. */
export function parseEpochMs(text: string, endpoint: EndpointKind, path: () => string): number {
  const n = parseDecimal(text, endpoint, path);
  if (n < 0)
    throw new DecodeError(
      endpoint,
      path(),
      `expected an epoch timestamp, got ${JSON.stringify(text.slice(0, 40))}`,
    );
  return n >= MS_THRESHOLD ? Math.round(n) : Math.round(n * 1000);
}
