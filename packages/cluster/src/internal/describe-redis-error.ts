/**
 * What failed, in a user's terms, for an error of the Redis client: ioredis says
 * `Stream isn't writeable and enableOfflineQueue options is false` when the connection is down, for
 * instance. Never carries a secret (ioredis messages name host:port only).
 */
export function describeRedisError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const known: [RegExp, string][] = [
    [
      /Stream isn't writeable|Connection is closed|connection.*closed/i,
      'not connected (the connection to Redis is down)',
    ],
    [/ECONNREFUSED/, 'connection refused (nothing listens at that address)'],
    [/ETIMEDOUT|connect.*timed? ?out/i, 'the connection timed out'],
    [/ENOTFOUND|EAI_AGAIN/, 'the host name does not resolve'],
    [/Command timed out/i, 'no answer within the command timeout'],
    [
      /NOAUTH|WRONGPASS|invalid username-password|AUTH/i,
      "authentication failed (check the URL's user and password)",
    ],
    [/LOADING/, 'Redis is loading its data'],
    [/READONLY/, 'this Redis is a read-only replica'],
  ];
  for (const [pattern, words] of known) if (pattern.test(text)) return words;
  return error instanceof Error ? `${error.name}: ${error.message}` : text;
}
