// End-to-end: two `quoteflow sync --redis URL` processes (the built binary; `pnpm build` first)
// on one token against the simulator: they divide the codes, share the plan, and write one dataset.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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
    clockSpeed: 12,
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

function sync(): Promise<{ code: number | null; stderr: string; stdout: string }> {
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
      out,
      '--format',
      'ndjson',
      '--duration',
      '20',
      '--redis',
      redis.url,
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

async function rows(): Promise<{ code: string; tsMs: number }[]> {
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
  await walk(join(out, 'kline'));
  return found;
}

describe('quoteflow sync --redis', () => {
  it('runs two processes as one client: codes divided, one dataset, each closed bar once, no refusal', async () => {
    const [a, b] = await Promise.all([sync(), sync()]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    for (const r of [a, b]) {
      expect(r.stderr).not.toContain(TOKEN);
      expect(r.stdout).not.toContain(TOKEN);
    }
    // Both held a share at some point (the log names each assignment).
    const held = (stderr: string) =>
      stderr
        .split('\n')
        .filter((l) => l.includes('cluster assignment'))
        .map((l) => (JSON.parse(l) as { held: number }).held);
    expect(held(a.stderr).some((n) => n > 0 && n < CODES.length)).toBe(true);
    expect(held(b.stderr).some((n) => n > 0 && n < CODES.length)).toBe(true);

    expect(sim.log.refused()).toEqual([]);
    const all = await rows();
    const keys = all.map((r) => `${r.code}|${r.tsMs}`);
    expect(keys.length).toBe(new Set(keys).size);
    for (const code of CODES) {
      const ts = all
        .filter((r) => r.code === code)
        .map((r) => r.tsMs)
        .sort((x, y) => x - y);
      expect(ts.length, code).toBeGreaterThan(5);
      for (let i = 1; i < ts.length; i++) expect(ts[i]! - ts[i - 1]!, `${code} gap`).toBe(60_000);
    }
  });
});
