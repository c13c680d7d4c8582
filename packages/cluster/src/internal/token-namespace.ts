import { createHash } from 'node:crypto';

/**
 * The Redis key namespace of one token: `<prefix>:{<hash>}`, where the hash is a SHA-256 of the
 * token (never the token itself). The braces are a Redis Cluster hash tag, so every key of a token
 * lands in one slot and one Lua script may touch them all.
 */
export function tokenNamespace(prefix: string, token: string): string {
  const hash = createHash('sha256').update('quoteflow:').update(token).digest('hex').slice(0, 32);
  return `${prefix}:{${hash}}`;
}
