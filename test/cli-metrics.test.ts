// End-to-end: what `--metrics-port` serves, scraped from real CLI processes over HTTP while they
// run against the simulator (strict limits, real clock), and checked against the simulator's log.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { dataFilesUnder, runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'cli-metrics-token-6f10';
let sim: Simulator;
let work: string;
const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 9 });
  work = await mkdtemp(join(tmpdir(), 'qf-metrics-'));
});

afterAll(async () => {
  expect(sim.log.refused()).toEqual([]);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as { port: number };
  await new Promise((res) => server.close(res));
  return port;
}

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}

/** Waits until `path` answers `status` (a process starting up), failing after `ms`. */
async function until(port: number, path: string, status: number, ms = 30_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await get(port, path).catch(() => undefined);
    if (r?.status === status) return r.text;
    if (Date.now() > deadline) throw new Error(`${path} never answered ${status} (last ${r?.status})`);
    await sleep(100);
  }
}

/** One sample's value: `name{labels}` exactly as exposed. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) return undefined;
  const value = line.slice(series.length + 1);
  return value === '+Inf' ? Number.POSITIVE_INFINITY : Number(value);
}

/** Prometheus's own linter on a scrape: `promtool check metrics` (scripts/test-tools.sh unpacks it). */
function promtoolCheck(text: string): { status: number | null; output: string } {
  const promtool = join(import.meta.dirname, '..', '.cache', 'prometheus', 'usr', 'bin', 'promtool');
  const r = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error !== undefined)
    throw new Error(`promtool could not run (bash scripts/test-tools.sh): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('quoteflow sync --metrics-port', () => {
  it('serves counts that match the simulator, latency and wait histograms, quota gauges, freshness from read time', async () => {
    const port = await freePort();
    const run = startQuoteflow(
      [
        'sync',
        '--codes',
        'BTCUSDT,ETHUSDT',
        '--kline-types',
        '1',
        '--bars',
        '20',
        '--out',
        join(work, 'sync'),
        '--duration',
        '15',
        '--metrics-port',
        String(port),
      ],
      env(),
    );
    expect(await until(port, '/health', 200)).toBe('ok\n');
    await until(port, '/ready', 200);
    // The /kline requests are the backfill's (a live re-read of a bar is rare): the counters equal
    // the simulator's log, give or take an answer per series still on its way at the scrape.
    const answeredBefore = sim.log.count((e) => e.endpoint === 'kline' && e.done);
    const first = (await get(port, '/metrics')).text;
    const sentAfter = sim.log.count({ endpoint: 'kline' });
    expect(answeredBefore).toBeGreaterThan(0);
    const counted = sample(first, 'quoteflow_requests_total{endpoint="kline",outcome="ok"}')!;
    expect(counted).toBeGreaterThanOrEqual(answeredBefore - 2);
    expect(counted).toBeLessThanOrEqual(sentAfter);
    expect(sample(first, 'quoteflow_request_duration_seconds_count{endpoint="kline",outcome="ok"}')).toBe(
      counted,
    );
    expect(sample(first, 'quoteflow_request_wait_seconds_count{endpoint="kline"}')).toBe(counted);
    expect(sample(first, 'quoteflow_quota_window_limit{rule="per-minute",scope="all"}')).toBe(1200);
    expect(sample(first, 'quoteflow_quota_daily_limit')).toBe(1_728_000);
    const remaining = sample(first, 'quoteflow_quota_daily_remaining')!;
    expect(remaining).toBeLessThan(1_728_000);
    expect(remaining).toBeGreaterThan(1_700_000);
    // A few dozen requests a minute spend 1,728,000 a day in weeks: the day resets long before.
    expect(sample(first, 'quoteflow_quota_daily_exhausted_in_seconds')).toBe(Number.POSITIVE_INFINITY);
    // Prometheus's own linter passes the scrape (no gauge named like a counter, say).
    expect(promtoolCheck(first)).toEqual({ status: 0, output: '' });
    expect(first).toContain('quoteflow_nodejs_active_handles{type=');
    // Freshness: now minus when the newest final bar's values were read, not the bar's start.
    const fresh = sample(first, 'quoteflow_freshness_seconds{code="BTCUSDT",kline_type="1"}')!;
    expect(fresh).toBeGreaterThanOrEqual(0);
    expect(fresh).toBeLessThan(70);
    // Crypto minutes every UTC minute, read whole: no gap, and the counter says 0 rather than nothing.
    expect(sample(first, 'quoteflow_gaps_total{kline_type="1"}')).toBe(0);
    // The dataset's table upkeep says where it stands from the sink's start: nothing behind.
    expect(sample(first, 'quoteflow_upkeep_behind{dataset="kline"}')).toBe(0);
    expect(sample(first, 'quoteflow_upkeep_merges_due{dataset="kline"}')).toBeGreaterThanOrEqual(0);
    expect(sample(first, 'quoteflow_upkeep_compactions_total{dataset="kline",outcome="void"}')).toBe(0);
    expect(first).toContain('quoteflow_process_cpu_seconds_total');
    expect(first).not.toContain('quoteflow_process_process_');
    expect(first).not.toContain(TOKEN);
    // The live polls are counted too, once one has been answered.
    await vi.waitFor(
      async () => {
        const later = (await get(port, '/metrics')).text;
        expect(
          sample(later, 'quoteflow_requests_total{endpoint="batch-kline",outcome="ok"}'),
        ).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 100 },
    );
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  });
});

/** Bar starts (epoch ms) of every kline row under `dir` (NDJSON), oldest first. */
async function heldStarts(dir: string): Promise<number[]> {
  const starts: number[] = [];
  for (const f of await dataFilesUnder(join(dir, 'kline')))
    for (const line of (await readFile(f, 'utf8')).split('\n'))
      if (line.trim() !== '') starts.push(Date.parse((JSON.parse(line) as { ts: string }).ts));
  return starts.sort((a, b) => a - b);
}

/** `ms` on New York's clock, `2026-03-09 09:31 America/New_York` (Swedish dates are ISO-like). */
const newYork = (ms: number): string =>
  `${new Date(ms).toLocaleString('sv-SE', { timeZone: 'America/New_York' }).slice(0, 16)} America/New_York`;

describe('quoteflow sync: a gap', () => {
  it('warns with the first and last missing bar in UTC and New York time, and counts it in quoteflow_gaps_total', async () => {
    const code = 'AAPL.US';
    const out = join(work, 'gap');
    // A dataset whose newest AAPL.US minute is a week old, written through a simulator whose clock
    // stands then (a weekday after the close). A stock's /kline reaches back only 500 bars, so the
    // sync cannot fill the days between: a real gap, reported once (by the history read; the
    // simulator cannot leave bars out, which a missing-bars warning needs) with its range.
    const then = new Date(Date.now() - 7 * 86_400_000);
    then.setUTCHours(21, 30, 0, 0);
    while (then.getUTCDay() === 0 || then.getUTCDay() === 6) then.setUTCDate(then.getUTCDate() - 1);
    {
      await using past = await startSimulator({
        port: 0,
        tokens: { [TOKEN]: 'professional' },
        seed: 9,
        clock: { now: () => then.getTime() },
      });
      const old = await runQuoteflow(
        ['backfill', '--codes', code, '--kline-type', '1', '--bars', '3', '--out', out, '--format', 'ndjson'],
        { ...env(), QUOTEFLOW_BASE_URL: past.url },
      );
      expect(old.code, old.stderr).toBe(0);
    }
    const heldBefore = (await heldStarts(out)).at(-1)!;
    const port = await freePort();
    const run = startQuoteflow(
      [
        'sync',
        '--codes',
        code,
        '--kline-types',
        '1',
        '--bars',
        '3',
        '--out',
        out,
        '--format',
        'ndjson',
      ].concat(['--duration', '30', '--metrics-port', String(port)]),
      env(),
    );
    await until(port, '/ready', 200);
    // The reported gap (and the short history it comes from) counted, once its history was read
    // (ready comes before that).
    const gaps = async (): Promise<number> =>
      sample((await get(port, '/metrics')).text, 'quoteflow_gaps_total{kline_type="1"}') ?? 0;
    await vi.waitFor(async () => expect(await gaps()).toBeGreaterThanOrEqual(1), {
      timeout: 25_000,
      interval: 100,
    });
    run.child.kill('SIGTERM');
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    // The hole by the simulator's own calendar: its bars after the old newest one and before the
    // oldest one the sync could read.
    const heldAfter = (await heldStarts(out)).find((t) => t > heldBefore)!;
    const missing = sim.market
      .bars(code, 1, sim.marketNow(), 6_000)
      .map((b) => b.startMs)
      .filter((t) => t > heldBefore && t < heldAfter);
    expect(missing.length).toBeGreaterThan(500);
    const warnings = done.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => String(l['msg']).includes('cannot page backwards'));
    expect(warnings).toEqual([
      expect.objectContaining({
        code,
        klineType: 1,
        from: new Date(missing[0]!).toISOString(),
        to: new Date(missing.at(-1)!).toISOString(),
        fromLocal: newYork(missing[0]!),
        toLocal: newYork(missing.at(-1)!),
        bars: missing.length,
      }),
    ]);
  });
});

describe('quoteflow sync: a code the service stops serving mid-run', () => {
  it('is dropped with a warning and quoteflow_codes_dropped_total, the others go on, and the end says so', async () => {
    const own = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 12 });
    try {
      const port = await freePort();
      const run = startQuoteflow(
        [
          'sync',
          '--codes',
          'BTCUSDT,SOLUSDT',
          '--kline-types',
          '1',
          '--bars',
          '5',
          '--out',
          join(work, 'dropped'),
          '--duration',
          '12',
          '--metrics-port',
          String(port),
        ],
        {
          ...env(),
          QUOTEFLOW_BASE_URL: own.url,
          QUOTEFLOW_LOG_FORMAT: 'json',
          QUOTEFLOW_STATE_DIR: join(work, 'dropped-state'),
        },
      );
      await until(port, '/ready', 200);
      expect(sample((await get(port, '/metrics')).text, 'quoteflow_codes_dropped_total')).toBe(0);
      own.withdraw('SOLUSDT');
      await vi.waitFor(() => expect(run.stderr()).toContain('the service no longer serves SOLUSDT'), {
        timeout: 20_000,
        interval: 50,
      });
      const polls = own.log.count({ endpoint: 'batch-kline' });
      const scrape = (await get(port, '/metrics')).text;
      expect(sample(scrape, 'quoteflow_codes_dropped_total')).toBe(1);
      expect(promtoolCheck(scrape).status).toBe(0);
      // The others go on: BTCUSDT is polled again, without SOLUSDT.
      await vi.waitFor(() => expect(own.log.count({ endpoint: 'batch-kline' })).toBeGreaterThan(polls + 1), {
        timeout: 20_000,
        interval: 50,
      });
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        '1 code(s) dropped during the run because the service no longer serves them: SOLUSDT',
      );
    } finally {
      await own.close();
    }
  }, 60_000);
});

describe('quoteflow depth --metrics-port', () => {
  it('says not ready while every poll fails, ready once one is answered', async () => {
    const port = await freePort();
    // Every attempt of the first two polls fails (4 attempts each), then the service answers.
    sim.addFault({ kind: 'http-5xx', endpoint: 'depth-tick', times: 8 });
    const run = startQuoteflow(
      [
        'depth',
        '--codes',
        'BTCUSDT',
        '--out',
        join(work, 'depth'),
        '--duration',
        '20',
        '--metrics-port',
        String(port),
      ],
      env(),
    );
    const notReady = await until(port, '/ready', 503);
    expect(notReady).toMatch(/^not ready: starting/);
    await until(port, '/ready', 200);
    const text = (await get(port, '/metrics')).text;
    expect(sample(text, 'quoteflow_requests_total{endpoint="depth-tick",outcome="QF_HTTP_STATUS"}')).toBe(8);
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  });
});

describe('--metrics-port: run takes it; a port in use is a usage error', () => {
  it('is exit 2 naming the flag, before any request, when the port is in use', async () => {
    const taken = createServer();
    await new Promise<void>((res) => taken.listen(0, '127.0.0.1', res));
    const { port } = taken.address() as { port: number };
    const before = sim.log.count(() => true);
    try {
      const r = await runQuoteflow(
        [
          'sync',
          '--codes',
          'BTCUSDT',
          '--kline-types',
          '1',
          '--bars',
          '5',
          '--out',
          join(work, 'taken'),
          '--metrics-port',
          String(port),
        ],
        env(),
      );
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--metrics-port ${port}: the port is in use`);
      expect(sim.log.count(() => true)).toBe(before);
    } finally {
      await new Promise((res) => taken.close(res));
    }
  });

  it('run --metrics-port serves the probes of a pipeline file', async () => {
    const file = join(work, 'metrics-pipeline.yaml');
    await writeFile(
      file,
      'version: 1\npipelines:\n  - source: { suspensions: { exchanges: [nyse] } }\n    sinks: { stdout: {} }\n',
    );
    const port = await freePort();
    const run = startQuoteflow(['run', file, '--metrics-port', String(port)], env());
    expect(await until(port, '/health', 200)).toBe('ok\n');
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  });
});
