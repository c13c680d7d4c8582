// End-to-end: two `quoteflow sync --redis URL` processes (the built binary; `pnpm build` first)
// on one token against the simulator: they divide the codes, share the plan, and write one dataset.
// The simulator runs on the real clock: the CLI processes cannot share a clock object with it, so
// market time must not run faster than theirs.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, syntheticCatalogue, type Simulator } from '@quoteflow/simulator';
import { testRedis, type TestRedis } from './support/redis-server.js';

const BIN = resolve(import.meta.dirname, '../packages/cli/bin/quoteflow');
const TOKEN = 'cluster-cli-token-4c1d0e';
const PRODUCTS = syntheticCatalogue({ count: 8, classes: ['crypto'] });
const CODES = PRODUCTS.map((p) => p.code);

let redis: TestRedis;
let sim: Simulator;
let out: string;

beforeAll(async () => {
  redis = await testRedis();
  sim = await startSimulator({
    tokens: { [TOKEN]: 'premium' },
    products: PRODUCTS,
    historyDays: 2,
    seed: 4,
  });
  out = await mkdtemp(join(tmpdir(), 'qf-cluster-cli-'));
});
afterAll(async () => {
  await sim?.close();
  await redis?.close();
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

function quoteflow(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(BIN, args, {
    env: {
      ...process.env,
      QUOTEFLOW_BASE_URL: sim.url,
      QUOTEFLOW_TOKEN: TOKEN,
      QUOTEFLOW_PLAN: 'premium',
      QUOTEFLOW_LOG_LEVEL: 'info',
      QF_TEST_REDIS_URL: redis.url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((res) => child.on('close', (code) => res({ code, stdout, stderr })));
}

function sync(
  redisUrl = redis.url,
  dir = out,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(
    BIN,
    [
      'sync',
      '--codes',
      CODES.join(','),
      '--kline-types',
      '1',
      '--bars',
      '5',
      '--out',
      dir,
      '--format',
      'ndjson',
      '--duration',
      '20',
      '--redis',
      redisUrl,
    ],
    {
      env: {
        ...process.env,
        QUOTEFLOW_BASE_URL: sim.url,
        QUOTEFLOW_TOKEN: TOKEN,
        QUOTEFLOW_PLAN: 'premium',
        QUOTEFLOW_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((res) => child.on('close', (code) => res({ code, stdout, stderr })));
}

async function rows(dir = out): Promise<{ code: string; tsMs: number }[]> {
  const found: { code: string; tsMs: number }[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (p.endsWith('.ndjson'))
        for (const line of (await readFile(p, 'utf8')).split('\n').filter(Boolean)) {
          const row = JSON.parse(line) as { code: string; ts: string };
          found.push({ code: row.code, tsMs: Date.parse(row.ts) });
        }
    }
  };
  await walk(join(dir, 'kline'));
  return found;
}

/** How many codes a worker held after each of its assignments (from its log). */
function heldCounts(stderr: string): number[] {
  return stderr
    .split('\n')
    .filter((l) => l.includes('cluster assignment'))
    .map((l) => (JSON.parse(l) as { held: number }).held);
}

describe('quoteflow sync --redis', () => {
  it('runs two processes as one client: both take part, one dataset, each closed bar once, no refusal', async () => {
    const [a, b] = await Promise.all([sync(), sync()]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    for (const r of [a, b]) {
      expect(r.stderr).not.toContain(TOKEN);
      expect(r.stdout).not.toContain(TOKEN);
    }
    // Both took part, and divided evenly (bounded-load rendezvous): 4 codes each while both ran.
    // (The one that stops last may take the other's codes over in its final moments.)
    expect(heldCounts(a.stderr), a.stderr).toContain(CODES.length / 2);
    expect(heldCounts(b.stderr), b.stderr).toContain(CODES.length / 2);

    expect(sim.log.refused()).toEqual([]);
    const all = await rows();
    const keys = all.map((r) => `${r.code}|${r.tsMs}`);
    expect(keys.length).toBe(new Set(keys).size);
    for (const code of CODES) {
      const ts = all
        .filter((r) => r.code === code)
        .map((r) => r.tsMs)
        .sort((x, y) => x - y);
      // The 5 closed bars of the backfill, and any that closed during the 20 s run.
      expect(ts.length, code).toBeGreaterThanOrEqual(5);
      for (let i = 1; i < ts.length; i++) expect(ts[i]! - ts[i - 1]!, `${code} gap`).toBe(60_000);
    }
  });

  it('fails with exit 1 naming Redis, without a request or a file, when Redis does not answer at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-cluster-noredis-'));
    try {
      const requestsBefore = sim.log.entries().length;
      const startedAt = Date.now();
      const r = await sync('redis://:secret-pw@127.0.0.1:1', dir);
      const elapsedMs = Date.now() - startedAt;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/? did not answer within 30 s/);
      expect(r.stderr).not.toContain('secret-pw');
      expect(r.stderr).not.toContain(TOKEN);
      // The contract's bound: 30 s or --duration (20 s here), whichever is longer, plus start-up.
      expect(elapsedMs).toBeLessThan(45_000);
      expect(sim.log.entries().length).toBe(requestsBefore);
      expect(await rows(dir).catch(() => [])).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('runs a pipeline file with redis on two processes that both take part, each code synced once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-cluster-run-'));
    try {
      const yaml = join(dir, 'pipeline.yaml');
      await writeFile(
        yaml,
        [
          'version: 1',
          'service: { plan: premium }',
          'duration: 15',
          'redis: { urlEnv: QF_TEST_REDIS_URL, heartbeatMs: 500 }',
          'pipelines:',
          `  - name: bars`,
          `    source: { kline: { codes: [${CODES.slice(0, 4).join(', ')}], klineTypes: [1], bars: 3 } }`,
          `    sinks: { files: { out: ${join(dir, 'data')}, format: ndjson } }`,
          '',
        ].join('\n'),
      );
      const [a, b] = await Promise.all([quoteflow(['run', yaml]), quoteflow(['run', yaml])]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      // Both joined the cluster and divided evenly: 2 of the 4 codes each while both ran.
      expect(heldCounts(a.stderr), a.stderr).toContain(2);
      expect(heldCounts(b.stderr), b.stderr).toContain(2);
      const all = await rows(join(dir, 'data'));
      const keys = all.map((r) => `${r.code}|${r.tsMs}`);
      expect(keys.length).toBe(new Set(keys).size);
      expect(new Set(all.map((r) => r.code)).size).toBe(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
