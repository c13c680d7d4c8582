import { randomBytes } from 'node:crypto';

const PREFIX = `qf-${randomBytes(6).toString('hex')}-`;
let counter = 0;

/** A request trace unique within the process and, through the random prefix, across processes. */
export function newTrace(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return PREFIX + counter.toString(36);
}
