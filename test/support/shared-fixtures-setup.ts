/**
 * Vitest global set-up of the integration project: the run's shared heavy programs, each started
 * once per run on first use and stopped when the run ends. See test/support/README.md.
 *
 * A small HTTP server on 127.0.0.1 in vitest's main process owns them; a test file (in any worker)
 * asks it with `sharedFixture(name)` (shared-fixtures.ts), and the first ask starts the program:
 * - `redis`: one Redis (container or host `redis-server`, as the test engine says);
 * - `python-reader`: test/python/read_dataset.py serving reads, so pyarrow, Polars and DuckDB are
 *   imported and Spark's JVM started once, not once per read or per file;
 * - `chromium`: one headless Chromium, reached by puppeteer over its DevTools WebSocket;
 * - `schema-registry`: one Apicurio Registry (schema-registry.ts), JVM started once;
 * - `s3`: one S3Proxy (s3.ts), the S3-compatible server of the object storage tests.
 * The Kafka broker has its own global set-up (kafka-global-setup.ts). A program a test stops or
 * restarts is the test's own (`startRedisServer()`, `privateBroker()`), never one of these.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from './kafka-global-setup.js';
import { PYTHON_READY_FILE_ENV } from './python.js';
import { SHARED_FIXTURES, type SharedFixtureName, type SharedFixtures } from './shared-fixture-names.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the run's shared-fixture server (shared-fixtures.ts asks it). */
    sharedFixturesUrl: string;
  }
}

interface Running<N extends SharedFixtureName> {
  readonly value: SharedFixtures[N];
  stop(): Promise<void>;
}

type Starters = { [N in SharedFixtureName]: () => Promise<Running<N>> };

const starters: Starters = {
  redis: async () => {
    const { startRedisServer } = await import('./redis-server.js');
    const redis = await startRedisServer();
    return { value: { url: redis.url, port: redis.port }, stop: () => redis.close() };
  },
  'python-reader': () => startPythonReader(),
  chromium: async () => {
    const { default: puppeteer } = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    return { value: { wsEndpoint: browser.wsEndpoint() }, stop: () => browser.close() };
  },
  'schema-registry': async () => (await import('./schema-registry.js')).startSchemaRegistry(REPO_ROOT),
  s3: async () => (await import('./s3.js')).startS3Proxy(),
};

/** Starts read_dataset.py's server and resolves with its port once it listens. */
async function startPythonReader(): Promise<Running<'python-reader'>> {
  const { ensurePython } = await import('./python.js');
  const child: ChildProcess = spawn(
    ensurePython(),
    [join(REPO_ROOT, 'test', 'python', 'read_dataset.py'), 'serve'],
    // stdin stays open: the server exits when it closes (this process gone, however it died).
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // Spark's JVM logs at WARN on stderr: kept (the last 64 KiB) for an error, not shown.
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-65_536)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`read_dataset.py serve exited ${code} before listening:\n${stderr}`)),
    );
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /^listening (\d+)$/m.exec(out);
      if (m !== null) resolve(Number(m[1]));
    });
  });
  return {
    value: { port },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end(); // the server stops Spark and exits
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = new Map<SharedFixtureName, Promise<Running<SharedFixtureName>>>();
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '').replace(/^\/fixture\//, ''));
    if (req.method !== 'POST' || !(SHARED_FIXTURES as readonly string[]).includes(name)) {
      res
        .writeHead(404)
        .end(`no shared fixture ${JSON.stringify(name)}; known: ${SHARED_FIXTURES.join(', ')}`);
      return;
    }
    const key = name as SharedFixtureName;
    let running = started.get(key);
    if (running === undefined) {
      const t0 = Date.now();
      running = (starters[key] as () => Promise<Running<SharedFixtureName>>)();
      running.then(
        () => console.error(`shared fixture ${key}: started in ${Date.now() - t0} ms`),
        () => started.delete(key), // the next ask tries again (and reports its own error)
      );
      started.set(key, running);
    }
    running.then(
      (r) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r.value)),
      (err: unknown) =>
        res.writeHead(500).end(err instanceof Error ? (err.stack ?? err.message) : String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  project.provide('sharedFixturesUrl', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // The run's own directory for ensurePython()'s "checked" file (python.ts): the workers, forked
  // after this, inherit the variable, so the venv is checked once per run, not once per test file.
  const runDir = await mkdtemp(join(tmpdir(), 'qf-test-run-'));
  process.env[PYTHON_READY_FILE_ENV] = join(runDir, 'python-ready');
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const stops = [...started.values()].map((p) =>
      p.then(
        (r) => r.stop(),
        () => undefined,
      ),
    );
    await Promise.all(stops);
    await rm(runDir, { recursive: true, force: true });
  };
}
