// End-to-end: `--limit`, QUOTEFLOW_LIMITS and a pipeline file's service.limits tighten the plan's
// limits, never loosen them, against the simulator (strict enforcement, real clock).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'cli-limits-token-2b7e';

let sim: Simulator;
let work: string;
const env = (more: Record<string, string> = {}): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  ...more,
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 7 });
  work = await mkdtemp(join(tmpdir(), 'qf-limits-'));
});

afterAll(async () => {
  expect(sim.log.refused().map((e) => [e.endpoint, e.refusedBy])).toEqual([]);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('tighter limits than the plan', () => {
  it('--limit kline-rate=1/1s spaces /kline requests a second apart on a plan that allows 20 a second', async () => {
    const since = sim.marketNow();
    const r = await runQuoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT,ETHUSDT,XRPUSDT',
        '--kline-type',
        '1',
        '--bars',
        '600',
        '--out',
        join(work, 'spaced'),
        '--limit',
        'kline-rate=1/1s',
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const arrivals = sim.log
      .filter({ endpoint: 'kline', sinceMs: since })
      .map((e) => e.arrivalMs)
      .sort((a, b) => a - b);
    expect(arrivals.length).toBeGreaterThanOrEqual(6);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
  });

  it('QUOTEFLOW_LIMITS batch-kline.groups=5 packs live polls to 5 groups a request', async () => {
    const since = sim.marketNow();
    const codes = ['BTCUSDT', 'ETHUSDT', 'XRPUSDT', 'EURGBP', 'AUDUSD', 'GOLD', 'AAPL.US', '700.HK'];
    const r = await runQuoteflow(
      [
        'sync',
        '--codes',
        codes.join(','),
        '--kline-types',
        '1',
        '--bars',
        '5',
        '--out',
        join(work, 'packed'),
        '--duration',
        '6',
      ],
      env({ QUOTEFLOW_LIMITS: 'batch-kline.groups=5' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const batches = sim.log.filter({ endpoint: 'batch-kline', sinceMs: since });
    expect(batches.length).toBeGreaterThan(0);
    expect(Math.max(...batches.map((e) => e.groups))).toBeLessThanOrEqual(5);
  });

  it('refuses a limit above the plan, or one that does not exist, with exit 2 and no request', async () => {
    const before = sim.log.length;
    const above = await runQuoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT',
        '--kline-type',
        '1',
        '--bars',
        '5',
        '--out',
        join(work, 'x'),
        '--limit',
        'per-minute=1201',
      ],
      env(),
    );
    expect(above.code).toBe(2);
    expect(above.stderr).toMatch(
      /--limit: plan override of rule "per-minute": the limit must be an integer from 1 to 1200 on plan professional \(an override may only tighten\), got 1201/,
    );
    const unknown = await runQuoteflow(['static-info', '--codes', 'AAPL.US', '--limit', 'per-hour=3'], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--limit per-hour=3: no limit is called "per-hour"/);
    expect(sim.log.length).toBe(before);
  });

  it("takes a pipeline file's service.limits, naming file:line for a bad one and the plan for a loose one", async () => {
    const file = join(work, 'limits.yaml');
    const yaml = (limits: string) => `version: 1
service:
  plan: basic
  limits: ${limits}
pipelines:
  - source: { kline: { codes: [BTCUSDT], klineTypes: [1] } }
    sinks: { stdout: {} }
`;
    await writeFile(file, yaml('{ per-minute: 30, kline-rate: 1/2s }'));
    const ok = await runQuoteflow(['run', '--dry-run', file], env({ QUOTEFLOW_PLAN: 'basic' }));
    expect(ok.code, ok.stderr).toBe(0);
    await writeFile(file, yaml('{ per-hour: 30 }'));
    const bad = await runQuoteflow(['run', '--dry-run', file], env({ QUOTEFLOW_PLAN: 'basic' }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/limits\.yaml:4: service\.limits\.per-hour: .*no limit is called "per-hour"/);
    // --limit tightens the file's limits further, and is held to the plan like them.
    await writeFile(file, yaml('{ per-minute: 30, kline-rate: 1/2s }'));
    const flagLoose = await runQuoteflow(
      ['run', '--dry-run', file, '--limit', 'per-minute=61'],
      env({ QUOTEFLOW_PLAN: 'basic' }),
    );
    expect(flagLoose.code).toBe(2);
    expect(flagLoose.stderr).toMatch(/plan override of rule "per-minute": .* from 1 to 60 on plan basic/);
    const flagTight = await runQuoteflow(
      ['run', '--dry-run', file, '--limit', 'batch-kline-interval=1/10s'],
      env({ QUOTEFLOW_PLAN: 'basic' }),
    );
    expect(flagTight.code, flagTight.stderr).toBe(0);
    expect(ok.stdout).toMatch(/refreshed every 3\.1s/);
    expect(flagTight.stdout).toMatch(/refreshed every 10\.1s/);
    await writeFile(file, yaml('{ per-minute: 61 }'));
    const loose = await runQuoteflow(['run', '--dry-run', file], env({ QUOTEFLOW_PLAN: 'basic' }));
    expect(loose.code).toBe(2);
    expect(loose.stderr).toMatch(
      /service\.limits: plan override of rule "per-minute": the limit must be an integer from 1 to 60 on plan basic/,
    );
  });
});
