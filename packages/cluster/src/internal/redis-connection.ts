import { Redis } from 'ioredis';
import { ClusterError } from '../cluster-error.js';
import { redactRedisUrl } from './redact-redis-url.js';

/** What a cluster component accepts as its Redis: a URL (it opens and owns a connection) or a client. */
export type RedisLike = string | Redis;

/** A connection and whether the component owns (and so closes) it. */
export interface RedisHandle {
  readonly client: Redis;
  readonly owned: boolean;
}

/**
 * Opens (or adopts) the Redis connection of a cluster component. An opened connection reconnects
 * for ever (every 100 ms growing to 1 s), fails commands at once while disconnected (no offline
 * queue: a reservation must never be replayed late) and times commands out after
 * `commandTimeoutMs`, so a component notices a lost Redis quickly and pauses.
 */
export function openRedis(redis: RedisLike, commandTimeoutMs: number): RedisHandle {
  if (typeof redis !== 'string') return { client: redis, owned: false };
  let url: URL;
  try {
    url = new URL(redis);
  } catch {
    throw new ClusterError(
      'QF_INVALID_OPTION',
      `"redis" must be a redis:// or rediss:// URL, got ${redactRedisUrl(redis)}`,
    );
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ClusterError(
      'QF_INVALID_OPTION',
      `"redis" must be a redis:// or rediss:// URL, got ${redactRedisUrl(redis)}`,
    );
  }
  const client = new Redis(redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(1_000, commandTimeoutMs),
    retryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
    lazyConnect: false,
  });
  // Without a listener, ioredis prints every connection error; the components report state instead.
  client.on('error', () => undefined);
  return { client, owned: true };
}

/** Resolves when `client` is ready (or at once if it is), after `timeoutMs`, or when `signal` aborts. */
export function whenReady(client: Redis, signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    client.on('ready', done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Closes an owned connection (QUIT, then disconnect); leaves an adopted one alone. */
export async function closeRedis(handle: RedisHandle): Promise<void> {
  if (!handle.owned) return;
  try {
    if (handle.client.status === 'ready') await handle.client.quit();
  } catch {
    // Already gone.
  }
  handle.client.disconnect();
}
