import { createHash } from 'node:crypto';

/** Safe label of a token for logs: `plan#` + the first 6 hex digits of its SHA-256. */
export function tokenLabel(token: string, plan: string | undefined): string {
  return `${plan ?? 'unknown'}#${createHash('sha256').update(token).digest('hex').slice(0, 6)}`;
}
