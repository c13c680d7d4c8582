// End-to-end: two `quoteflow sync --redis URL` processes (the built binary; `pnpm build` first)
// on one token against the simulator: they divide the codes, share the plan, and write one dataset;
// each run lasts until both took part and the dataset holds every code's bars, then stops on SIGTERM.
// The simulator runs on the real clock: the CLI processes cannot share a clock object with it, so
// market time must not run faster than theirs.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, syntheticCatalogue, type Simulator } from '@quoteflow/simulator';
import { startQuoteflow, type QuoteflowChild, type QuoteflowRun } from './support/quoteflow-process.js';
import { ensurePython, readDatasets } from './support/python.js';
import { testRedis, type TestRedis } from './support/redis-server.js';
import { freshBucket } from './support/s3.js';

const TOKEN = 'cluster-cli-token-4c1d0e';
const PRODUCTS = syntheticCatalogue({ count: 8, classes: ['crypto'] });
const CODES = PRODUCTS.map((p) => p.code);

let redis: TestRedis;
let sim: Simulator;
let out: string;

beforeAll(async () => {
  ensurePython();
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

const cliEnv = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'premium',
  QUOTEFLOW_LOG_LEVEL: 'info',
  QF_TEST_REDIS_URL: redis.url,
});

/** `quoteflow sync --redis` of every code into `dir`, with `extra` flags (a --duration, say). */
function sync(
  redisUrl: string,
  dir: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): QuoteflowChild {
  return startQuoteflow(
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
      '--redis',
      redisUrl,
      ...extra,
    ],
    { ...cliEnv(), ...env },
  );
}

/**
 * Waits until every process of `children` held `share` codes (both took part) and `ready()` holds,
 * then stops them with SIGTERM (a clean stop: flush, release, exit 0) and resolves with their runs.
 */
async function runUntilShared(
  children: readonly QuoteflowChild[],
  share: number,
  ready: () => Promise<void> | void,
): Promise<QuoteflowRun[]> {
  try {
    await vi.waitFor(
      async () => {
        for (const c of children) {
          expect(c.child.exitCode, c.stderr()).toBeNull();
          expect(heldCounts(c.stderr())).toContain(share);
        }
        await ready();
      },
      { timeout: 90_000, interval: 250 },
    );
  } finally {
    for (const c of children) c.child.kill('SIGTERM');
  }
  return Promise.all(children.map((c) => c.done));
}

async function rows(dir: string): Promise<{ code: string; tsMs: number }[]> {
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

/** No bar twice; every code's 5 closed bars of the backfill, and any that closed during the run, without a gap. */
function expectEachBarOnce(all: readonly { code: string; tsMs: number }[]): void {
  const keys = all.map((r) => `${r.code}|${r.tsMs}`);
  expect(keys.length).toBe(new Set(keys).size);
  for (const code of CODES) {
    const ts = all
      .filter((r) => r.code === code)
      .map((r) => r.tsMs)
      .sort((x, y) => x - y);
    expect(ts.length, code).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < ts.length; i++) expect(ts[i]! - ts[i - 1]!, `${code} gap`).toBe(60_000);
  }
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
    // A checkpoint a second: the dataset shows the backfill of every code soon.
    const both = [1, 2].map(() => sync(redis.url, out, ['--checkpoint-ms', '1000']));
    const [a, b] = await runUntilShared(both, CODES.length / 2, async () => {
      const all = await rows(out).catch(() => []);
      for (const code of CODES)
        expect(all.filter((r) => r.code === code).length, code).toBeGreaterThanOrEqual(5);
    });
    expect(a!.code, a!.stderr).toBe(0);
    expect(b!.code, b!.stderr).toBe(0);
    for (const r of [a!, b!]) {
      expect(r.stderr).not.toContain(TOKEN);
      expect(r.stdout).not.toContain(TOKEN);
    }
    // Both took part, and divided evenly (bounded-load rendezvous): 4 codes each while both ran.
    // (The one that stops last may take the other's codes over in its final moments.)
    expect(heldCounts(a!.stderr), a!.stderr).toContain(CODES.length / 2);
    expect(heldCounts(b!.stderr), b!.stderr).toContain(CODES.length / 2);

    expect(sim.log.refused()).toEqual([]);
    expectEachBarOnce(await rows(out));
  });

  it('runs two processes on separate local directories sharing only an s3:// bucket: each closed bar once, read by delta-rs', async () => {
    const bucket = await freshBucket('cluster-cli');
    const url = bucket.url('shared');
    const locals = await Promise.all([1, 2].map((i) => mkdtemp(join(tmpdir(), `qf-cluster-s3-${i}-`))));
    const table = { reader: 'deltalake' as const, path: `${url}/kline`, s3: bucket.server };
    const tableRows = async (): Promise<{ code: string; tsMs: number }[]> =>
      (await readDatasets([table]))[0]!.rows.map((r) => ({ code: String(r.code), tsMs: Number(r.ts) }));
    try {
      // Each worker's scratch (files built before their upload) under its own TMPDIR: no disk in common.
      const both = locals.map((local) =>
        sync(redis.url, url, ['--checkpoint-ms', '1000', '--format', 'parquet'], {
          ...bucket.env(),
          TMPDIR: local,
        }),
      );
      const [a, b] = await runUntilShared(both, CODES.length / 2, async () => {
        const all = await tableRows().catch(() => []);
        for (const code of CODES)
          expect(all.filter((r) => r.code === code).length, code).toBeGreaterThanOrEqual(5);
      });
      expect(a!.code, a!.stderr).toBe(0);
      expect(b!.code, b!.stderr).toBe(0);
      expect(heldCounts(a!.stderr), a!.stderr).toContain(CODES.length / 2);
      expect(heldCounts(b!.stderr), b!.stderr).toContain(CODES.length / 2);
      for (const r of [a!, b!]) expect(r.stderr).not.toContain(bucket.server.secretAccessKey);
      expectEachBarOnce(await tableRows());
      // Nothing of either worker's data stayed on its local disk (Node keeps its compile cache there).
      for (const local of locals)
        expect((await readdir(local)).filter((n) => n.startsWith('quoteflow'))).toEqual([]);
    } finally {
      await Promise.all(locals.map((l) => rm(l, { recursive: true, force: true })));
    }
  });

  it('fails with exit 1 naming Redis, without a request or a file, when Redis does not answer at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-cluster-noredis-'));
    try {
      const requestsBefore = sim.log.entries().length;
      const startedAt = Date.now();
      // The connect timeout short, longer than the --duration (the 30 s default is waited out in
      // cli-failures.test.ts, for Kafka, through the same option).
      const r = await sync('redis://:secret-pw@127.0.0.1:1', dir, ['--duration', '2'], {
        QUOTEFLOW_CONNECT_TIMEOUT_S: '3',
      }).done;
      const elapsedMs = Date.now() - startedAt;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/? did not answer within 3 s/);
      expect(r.stderr).not.toContain('secret-pw');
      expect(r.stderr).not.toContain(TOKEN);
      // The contract's bound: the connect timeout or --duration, whichever is longer, plus start-up.
      expect(elapsedMs).toBeGreaterThanOrEqual(3_000);
      expect(elapsedMs).toBeLessThan(3_000 + 15_000);
      expect(sim.log.entries().length).toBe(requestsBefore);
      expect(await rows(dir).catch(() => [])).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs a pipeline file with redis on two processes that both take part, each code synced once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qf-cluster-run-'));
    try {
      const yaml = join(dir, 'pipeline.yaml');
      await writeFile(
        yaml,
        [
          'version: 1',
          'service: { plan: premium }',
          'redis: { urlEnv: QF_TEST_REDIS_URL, heartbeatMs: 500 }',
          'pipelines:',
          `  - name: bars`,
          `    source: { kline: { codes: [${CODES.slice(0, 4).join(', ')}], klineTypes: [1], bars: 3 } }`,
          `    sinks: { files: { out: ${join(dir, 'data')}, format: ndjson } }`,
          '',
        ].join('\n'),
      );
      const run = () => startQuoteflow(['run', yaml], cliEnv());
      const both = [run(), run()];
      // Until each backfilled (a pipeline file has no checkpoint interval: the stop writes the bars).
      const [a, b] = await runUntilShared(both, 2, () => {
        for (const c of both) expect(c.stderr()).toContain('"msg":"backfill-done"');
      });
      expect(a!.code, a!.stderr).toBe(0);
      expect(b!.code, b!.stderr).toBe(0);
      // Both joined the cluster and divided evenly: 2 of the 4 codes each while both ran.
      expect(heldCounts(a!.stderr), a!.stderr).toContain(2);
      expect(heldCounts(b!.stderr), b!.stderr).toContain(2);
      const all = await rows(join(dir, 'data'));
      const keys = all.map((r) => `${r.code}|${r.tsMs}`);
      expect(keys.length).toBe(new Set(keys).size);
      expect(new Set(all.map((r) => r.code)).size).toBe(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
