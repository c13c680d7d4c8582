/**
 * Redis in a container (the `containers` test engine): the quoteflow-test-redis image started by
 * testcontainers, published on a fixed free port of 127.0.0.1 so that a stop and a start (by
 * container id) bring it back at the same URL, as the host `redis-server` of redis-server.ts does.
 */
import { Wait } from 'testcontainers';
import {
  containerName,
  removeContainer,
  startContainer,
  stopContainer,
  testContainer,
} from './containers.js';
import { freePort, waitForPing, type TestRedis } from './redis-server.js';
import { REDIS_IMAGE } from './test-engine.js';

/** Starts Redis in a container (no persistence, like the host one) and waits until it answers PING. */
export async function startRedisContainer(): Promise<TestRedis> {
  const port = await freePort();
  const started = await testContainer(REDIS_IMAGE, containerName('redis'))
    .withLoopbackPort(6379, port)
    .withCommand(['--bind', '0.0.0.0', '--protected-mode', 'no', '--save', '', '--appendonly', 'no'])
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .withStartupTimeout(60_000)
    .start();
  const id = started.getId();
  await waitForPing(port, 10_000);
  let running = true;
  let closed = false;
  const stop = async () => {
    if (!running) return;
    running = false;
    await stopContainer(id, 5_000);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    owned: true,
    stop,
    restart: async () => {
      await stop();
      await startContainer(id);
      running = true;
      await waitForPing(port, 10_000);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      running = false;
      await removeContainer(id);
    },
  };
}
