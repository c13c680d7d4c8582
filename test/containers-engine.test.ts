/**
 * Under the `containers` test engine (test/support/test-engine.ts), Redis runs in a container that
 * testcontainers started from the local image, named for what it is and published on 127.0.0.1
 * only; a stop and a start by id bring it back on the same port. Skipped under the host engine.
 */
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { runtimeClient } from './support/containers.js';
import { startRedisContainer } from './support/redis-container.js';
import type { TestRedis } from './support/redis-server.js';
import { REDIS_IMAGE, testEngine } from './support/test-engine.js';

const containers = (await testEngine()) === 'containers';
let redis: TestRedis | undefined;

afterAll(async () => {
  await redis?.close();
});

it.runIf(containers)(
  'publishes Redis on the loopback only, and keeps its port across a stop and a start',
  async () => {
    redis = await startRedisContainer();
    const client = await runtimeClient();
    const [info] = (await client.container.list()).filter((c) =>
      c.Ports.some((p) => p.PublicPort === redis!.port),
    );
    expect(info?.Image).toContain(REDIS_IMAGE.replace(/^localhost\//, ''));
    expect(info?.Names.some((n) => /quoteflow-test-redis-/.test(n))).toBe(true);
    const inspect = await client.container.inspect(client.container.getById(info!.Id));
    expect(inspect.HostConfig.PortBindings).toEqual({
      '6379/tcp': [{ HostIp: '127.0.0.1', HostPort: String(redis.port) }],
    });

    await redis.restart();
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await probe.connect();
      expect(await probe.ping()).toBe('PONG');
    } finally {
      probe.disconnect();
    }
  },
);
