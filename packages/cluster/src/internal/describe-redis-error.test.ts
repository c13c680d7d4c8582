import { describe, expect, it } from 'vitest';
import { describeRedisError } from './describe-redis-error.js';

describe('describeRedisError', () => {
  it.each([
    [
      "Stream isn't writeable and enableOfflineQueue options is false",
      'not connected (the connection to Redis is down)',
    ],
    ['connect ECONNREFUSED 127.0.0.1:6390', 'connection refused (nothing listens at that address)'],
    ['Command timed out', 'no answer within the command timeout'],
    [
      'WRONGPASS invalid username-password pair or user is disabled.',
      "authentication failed (check the URL's user and password)",
    ],
  ])("says %j in the user's terms", (message, words) => {
    expect(describeRedisError(new Error(message))).toBe(words);
  });

  it('keeps an error it does not know as it is', () => {
    expect(describeRedisError(new TypeError('odd'))).toBe('TypeError: odd');
  });
});
