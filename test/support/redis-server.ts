import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inVitest, sharedFixture } from './shared-fixtures.js';
import { testEngine } from './test-engine.js';

/** A Redis server for a test: its URL and how to stop (and restart) it. */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Whether the test owns the server (false for the run's shared one and for `REDIS_URL`'s). */
  readonly owned: boolean;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port (only for a server this helper started). */
  restart(): Promise<void>;
  /** Stops the server and removes its temporary directory. Idempotent. */
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound once, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sends PING over a raw socket; true on `+PONG`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

/** Waits until Redis answers PING on 127.0.0.1:`port`; gives up early when `child` exits. */
export async function waitForPing(port: number, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child !== undefined && child.exitCode !== null)
      throw new Error(`redis-server on port ${port} exited with code ${child.exitCode}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/**
 * A Redis of the test's own, which it may stop and restart: in a container (redis-container.ts)
 * under the `containers` test engine, else {@link startHostRedisServer}.
 */
export async function startRedisServer(): Promise<TestRedis> {
  if ((await testEngine()) === 'containers') {
    const { startRedisContainer } = await import('./redis-container.js');
    return startRedisContainer();
  }
  return startHostRedisServer();
}

/**
 * Starts `redis-server` on 127.0.0.1 on a free port, with a temporary directory and no
 * persistence (`--save '' --appendonly no`), and waits until it answers PING. Needs the
 * `redis-server` binary (`scripts/redis/setup.sh` installs it from Debian's packages).
 */
export async function startHostRedisServer(): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'qf-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = proc;
    proc.stderr?.resume();
    const spawned = new Promise<void>((resolve, reject) => {
      proc.once('spawn', resolve);
      proc.once('error', (err) =>
        reject(new Error(`cannot start redis-server (run scripts/redis/setup.sh): ${err.message}`)),
      );
    });
    await spawned;
    await waitForPing(port, 10_000, proc);
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  let closed = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    owned: true,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The Redis a test uses: the one named by `REDIS_URL` when set, else the run's shared Redis (a
 * shared fixture, started on the first ask of the run: shared-fixtures-setup.ts). Neither may be
 * stopped, restarted or flushed by a test (those refuse; `close()` does nothing): a test keeps to
 * its own key prefix, token or group. A test that stops Redis takes its own, {@link startRedisServer}.
 * Outside vitest (a bench), a fresh one of {@link startRedisServer}.
 */
export async function testRedis(): Promise<TestRedis> {
  const external = process.env.REDIS_URL;
  if ((external === undefined || external === '') && !inVitest()) return startRedisServer();
  const url = external !== undefined && external !== '' ? external : (await sharedFixture('redis')).url;
  const port = Number(new URL(url).port || 6379);
  const refuse = () =>
    Promise.reject(
      new Error(`${url} is the run's shared Redis (or REDIS_URL's); this test cannot stop or restart it`),
    );
  return { url, port, owned: false, stop: refuse, restart: refuse, close: async () => undefined };
}
