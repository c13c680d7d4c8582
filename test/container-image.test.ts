/**
 * The service image (deploy/container): built with the project's container engine (podman) on the
 * local Debian base (bash deploy/container/build.sh; an image of the same inputs is reused), it
 * runs `quoteflow sync` as a non-root user with its settings from the environment and files,
 * answers `/health` and `/ready` on its published metrics port, and stops within 10 s of SIGTERM
 * with every bar it took committed. The simulator runs from the same image in a container whose
 * network the sync shares (`quoteflow sim`), so all traffic stays inside it and on 127.0.0.1. No
 * engine is a failure, not a skip: scripts/test.sh prepares it (scripts/containers/setup.sh).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { containerName } from './support/containers.js';
import { readDatasets } from './support/python.js';
import { OWNER_LABEL } from './support/test-engine.js';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const TOKEN = 'tok-image-93b0d4';
const METRICS_PORT = 9464;
let image: string;
let work: string;
const containers: string[] = [];

async function podman(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const { stdout } = await exec('podman', [...args], { timeout: timeoutMs, maxBuffer: 16 << 20 });
  return stdout.trim();
}

/** What a container wrote, stdout and stderr (`podman logs` passes each on as its own). */
async function logsOf(name: string): Promise<string> {
  const { stdout, stderr } = await exec('podman', ['logs', name], { timeout: 30_000, maxBuffer: 16 << 20 });
  return `${stdout}${stderr}`;
}

/** `podman run -d` of the image, labelled as the test's (a killed run's leftovers are reaped). */
async function start(name: string, args: readonly string[]): Promise<string> {
  containers.push(name);
  return podman(['run', '-d', '--name', name, '--label', `${OWNER_LABEL}=${process.pid}`, ...args]);
}

async function get(port: number, path: string): Promise<{ status: number; text: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, text: await res.text() };
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  try {
    await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}']);
  } catch (err) {
    throw new Error(
      `the container engine (podman) does not answer: bash scripts/containers/setup.sh prepares it (this test does not skip): ${(err as Error).message}`,
    );
  }
  const { stdout } = await exec('bash', [join(ROOT, 'deploy', 'container', 'build.sh')], {
    timeout: 600_000,
    maxBuffer: 16 << 20,
  });
  image = stdout.trim().split('\n').at(-1)!;
  work = await mkdtemp(join(tmpdir(), 'qf-image-'));
}, 600_000);

afterAll(async () => {
  // Newest first: the sync shares the simulator's network, and podman keeps a container others
  // depend on (removing the simulator first left it running after every run).
  for (const name of containers.reverse()) await podman(['rm', '-f', name]).catch(() => undefined);
  await rm(work, { recursive: true, force: true });
});

it('runs quoteflow sync as a non-root user, answers /health and /ready, and stops within 10 s of SIGTERM with its checkpoint committed', async () => {
  expect(await podman(['image', 'inspect', '--format', '{{.Config.User}}', image])).toBe('10001:10001');
  // The settings: the service's in the environment, the token and the codes in files (as a secret
  // and a config map would mount them), the data in a volume the non-root user may write.
  const config = join(work, 'config');
  const data = join(work, 'data');
  await mkdir(config);
  await mkdir(data);
  await chmod(data, 0o777);
  await writeFile(join(config, 'token'), `${TOKEN}\n`);
  await writeFile(join(config, 'codes.txt'), '# crypto trades around the clock\nBTCUSDT\nETHUSDT\n');

  const sim = containerName('sim');
  await start(sim, [
    '-p',
    `127.0.0.1::${METRICS_PORT}`,
    image,
    'sim',
    '--port',
    '8080',
    '--token',
    `${TOKEN}:professional`,
  ]);
  await vi.waitFor(async () => expect(await logsOf(sim)).toContain('listening on'), {
    timeout: 30_000,
    interval: 200,
  });
  const sync = containerName('sync');
  await start(sync, [
    ...[
      '--network',
      `container:${sim}`,
      '-v',
      `${config}:/etc/quoteflow:ro`,
      '-v',
      `${data}:/var/lib/quoteflow`,
    ],
    ...['-e', 'QUOTEFLOW_BASE_URL=http://127.0.0.1:8080', '-e', 'QUOTEFLOW_TOKEN_FILE=/etc/quoteflow/token'],
    ...['-e', 'QUOTEFLOW_PLAN=professional', '-e', 'QUOTEFLOW_LOG_LEVEL=info'],
    ...['-e', 'QUOTEFLOW_SYNC_KLINE_TYPES=1', '-e', 'QUOTEFLOW_SYNC_BARS=30', image],
  ]);
  const port = Number((await podman(['port', sim, `${METRICS_PORT}/tcp`])).split(':').at(-1));

  // The probes on the published port (the image listens on every interface of its network).
  await vi.waitFor(async () => expect(await get(port, '/health')).toEqual({ status: 200, text: 'ok\n' }), {
    timeout: 60_000,
    interval: 200,
  });
  await vi.waitFor(async () => expect((await get(port, '/ready'))?.status).toBe(200), {
    timeout: 60_000,
    interval: 200,
  });
  // Bars taken by the files sink before the stop: every one of them is in the table after it.
  const taken = await vi.waitFor(
    async () => {
      const text = (await get(port, '/metrics'))?.text ?? '';
      const line = /^quoteflow_sink_records_total\{sink="files",dataset="kline"\} (\d+)$/m.exec(text);
      expect(Number(line?.[1] ?? 0)).toBeGreaterThanOrEqual(60);
      return Number(line![1]);
    },
    { timeout: 60_000, interval: 200 },
  );

  const stopping = Date.now();
  await podman(['kill', '--signal', 'TERM', sync]);
  const exitCode = await podman(['wait', sync], 30_000);
  const stoppedInMs = Date.now() - stopping;
  const logs = await logsOf(sync);
  expect(exitCode, logs).toBe('0');
  expect(stoppedInMs, logs).toBeLessThan(10_000);
  expect(logs).toContain('sync stopped: sinks flushed, state written');

  const [table] = await readDatasets([{ reader: 'deltalake', path: join(data, 'data', 'kline') }]);
  const keys = table!.rows.map((r) => `${String(r['code'])} ${String(r['ts'])}`);
  expect(new Set(keys).size, 'each bar once').toBe(keys.length);
  expect(keys.length).toBeGreaterThanOrEqual(taken);
  const state = JSON.parse(await readFile(join(data, 'sync-state.json'), 'utf8')) as {
    series: Record<string, { rows: number }>;
  };
  expect(Object.values(state.series).reduce((n, s) => n + s.rows, 0)).toBe(keys.length);
  // Written by the image's user, not root.
  expect((await stat(join(data, 'sync-state.json'))).uid).toBe(10001);
}, 180_000);
