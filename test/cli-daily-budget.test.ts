// End-to-end, at real speed: a token whose daily budget is already spent on this machine (its
// quota database in the state directory holds the day's requests, as quoteflow processes record
// them) against the built binary. The commands say so at once on stderr (also without a terminal),
// with the use, the limit and the reset; `--exit-when-budget-spent` ends them with exit 75 before
// any request; `/ready` and `quoteflow plan` say the same.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { planLimits } from '../packages/core/src/index.js';
import { PLAN_SCHEDULER_DEFAULTS, PlanWindows, SqliteWindowStore } from '../packages/core/src/internal.js';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { RedisWindowStore } from '@quoteflow/cluster';
import { dataFilesUnder, filesUnder, runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';
import { StoreClient } from './support/redis-store-client.js';
import { freePort, testRedis } from './support/redis-server.js';

const TOKEN = 'cli-daily-budget-token-41c7';
/** A token whose day is spent in Redis (`sync --redis`), not in this machine's state directory. */
const REDIS_TOKEN = 'cli-daily-budget-redis-token-9e2a';
/** What the commands say of a spent budget: Free's 1,000 requests, all used. */
const SPENT = "the plan's daily budget is spent (1,000 of 1,000 requests); it resets at ";

let sim: Simulator;
let work: string;
let stateDir: string;
const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'free',
  QUOTEFLOW_STATE_DIR: stateDir,
});

/**
 * Records `count` requests of today in the token's quota database, under the daily windows the
 * CLI's scheduler checks (the calendar day of Asia/Shanghai and the rolling 24 hours).
 */
function spendToday(count: number): void {
  const store = new SqliteWindowStore({ token: TOKEN, stateDir });
  const d = PLAN_SCHEDULER_DEFAULTS;
  const windows = new PlanWindows(planLimits('free'), d.marginMs, d.dailyResetTimeZone, 0, 'settle', 'both');
  try {
    for (let i = 0; i < count; i++) {
      const now = Date.now();
      expect(store.tryAcquire(windows.dailySpecs(now), now)).toMatchObject({ acquired: true });
    }
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'free', [REDIS_TOKEN]: 'professional' },
    seed: 17,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-daily-budget-'));
  stateDir = join(work, 'state');
  spendToday(1_000);
});

afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('a token whose daily budget is spent', () => {
  it('--exit-when-budget-spent: backfill and static-info exit 75 at once, naming use, limit and reset, before any request or file', async () => {
    const before = sim.log.count();
    const out = join(work, 'exit');
    const runs = await Promise.all(
      [
        ['backfill', '--codes', 'BTCUSDT', '--kline-type', '1', '--bars', '10', '--out', out],
        ['static-info', '--codes', 'AAPL.US'],
      ].map((args) => runQuoteflow([...args, '--exit-when-budget-spent'], env())),
    );
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(75);
      expect(run.stderr).toContain(SPENT);
      expect(run.stderr).toMatch(/it resets at \d{4}-\d\d-\d\d \d\d:\d\d UTC, in (1d )?\d+h? ?\d*m?/);
      expect(run.stderr).toContain('exiting (--exit-when-budget-spent)');
      expect(run.stdout).toBe('');
    }
    expect(sim.log.count()).toBe(before);
    expect(await filesUnder(out)).toEqual([]);
  }, 60_000);

  it('without it: says so at once on a stderr that is no terminal, /ready says the same, and the command waits', async () => {
    const before = sim.log.count();
    const port = await freePort();
    const child = startQuoteflow(
      [
        'sync',
        '--codes',
        'BTCUSDT',
        '--kline-types',
        '1',
        '--bars',
        '10',
        '--out',
        join(work, 'wait'),
      ].concat(['--metrics-port', String(port)]),
      env(),
    );
    try {
      // A warning: shown at the default level without a terminal, before any status line.
      await vi.waitFor(() => expect(child.stderr()).toContain(SPENT), { timeout: 60_000, interval: 50 });
      const line = child
        .stderr()
        .split('\n')
        .find((l) => l.includes(SPENT))!;
      expect(JSON.parse(line)).toMatchObject({
        level: 40,
        used: 1_000,
        limit: 1_000,
        msg: expect.stringContaining(
          'the command waits until then (--exit-when-budget-spent: exit 75 instead)',
        ),
      });
      // The metrics server listens right after that line.
      await vi.waitFor(
        async () => {
          const ready = await fetch(`http://127.0.0.1:${port}/ready`);
          expect(ready.status).toBe(503);
          expect(await ready.text()).toContain(`not ready: ${SPENT}`);
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(child.child.exitCode).toBeNull(); // waiting, not failed
    } finally {
      child.child.kill('SIGTERM');
    }
    expect((await child.done).code).toBe(0); // a stop, as the contract has it
    expect(sim.log.count()).toBe(before);
  }, 60_000);

  it('quoteflow plan says how the budget stands today, as a line and in its JSON', async () => {
    const args = ['plan', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '10'];
    const table = await runQuoteflow(args, env());
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`today: ${SPENT}`);
    const json = await runQuoteflow([...args, '--format', 'json'], env());
    expect(JSON.parse(json.stdout)).toMatchObject({
      today: { used: 1_000, limit: 1_000, spent: true, resets_at: expect.stringMatching(/^\d{4}-.*Z$/) },
    });
  });
});

describe('a token whose daily budget is spent in Redis (sync --redis)', () => {
  it("--exit-when-budget-spent: exits 75 naming the token's use, limit and reset, before any request or data file", async () => {
    const redis = await testRedis();
    // Another worker of the token spent the day (three requests: --limit per-day=3) in Redis.
    const limits = { ...planLimits('professional'), perDay: 3 };
    const other = new StoreClient(
      new RedisWindowStore({ redis: redis.url, token: REDIS_TOKEN, limits }),
      limits,
    );
    try {
      for (let i = 0; i < 3; i++) await other.acquire('kline');
    } finally {
      await other.store.close();
    }
    const before = sim.log.count();
    const out = join(work, 'redis-exit');
    const run = await runQuoteflow(
      [
        'sync',
        '--codes',
        'BTCUSDT',
        '--kline-types',
        '1',
        '--bars',
        '10',
        '--out',
        out,
        '--redis',
        redis.url,
        '--limit',
        'per-day=3',
        '--exit-when-budget-spent',
      ],
      { ...env(), QUOTEFLOW_TOKEN: REDIS_TOKEN, QUOTEFLOW_PLAN: 'professional' },
    );
    expect(run.code, run.stderr).toBe(75);
    expect(run.stderr).toContain("the plan's daily budget is spent (3 of 3 requests); it resets at ");
    expect(run.stderr).toContain('exiting (--exit-when-budget-spent)');
    expect(sim.log.count()).toBe(before);
    expect(await dataFilesUnder(out)).toEqual([]);
    await redis.close();
  }, 90_000);
});
