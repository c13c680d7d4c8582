// End-to-end: the built `quoteflow` binary against the simulator's strict enforcement. Needs
// `pnpm build` first (the root `pnpm test` does it). Datasets are written as NDJSON here so the
// test reads them without a Parquet reader; the Parquet path is the same writer (sinks' interop tests).
// The simulator runs on the real clock: the CLI is another process and cannot share a clock object,
// so market time must not run faster than the CLI's (a 1-minute bar closes once a minute here); the
// kill -9 test's own simulator jumps ahead while the sync is down instead of waiting for a close.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';

const BIN = resolve(import.meta.dirname, '../packages/cli/bin/quoteflow');
const TOKEN = 'cli-e2e-token-7f3a9c';
const BAD_TOKEN = 'cli-e2e-wrong-token-55aa';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(BIN, args, {
    env: { ...process.env, QUOTEFLOW_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((res) =>
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

const quoteflow = (args: string[], env: Record<string, string> = {}): Promise<Run> => start(args, env).done;

interface Row {
  code: string;
  ts: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number | null;
  turnover: number | null;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== '_delta_log') await walk(p); // the table's Delta log, beside the data files
      } else out.push(p);
    }
  };
  if (existsSync(dir)) await walk(dir);
  return out;
}

/** Every kline row under DIR, with its kline type from the Hive directory. */
async function readKline(dir: string): Promise<(Row & { klineType: number })[]> {
  const rows: (Row & { klineType: number })[] = [];
  for (const file of await listFiles(join(dir, 'kline'))) {
    expect(file).toMatch(/\.ndjson$/); // only finished files under kline/
    const klineType = Number(/kline_type=(\d+)/.exec(file)![1]);
    for (const line of (await readFile(file, 'utf8')).split('\n'))
      if (line.trim() !== '') rows.push({ ...(JSON.parse(line) as Row), klineType });
  }
  return rows;
}

let sim: Simulator;
let work: string;
const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'basic',
});

beforeAll(async () => {
  // Every limit enforced on arrival, refusals logged. The CLI runs with QUOTEFLOW_PLAN=basic on a
  // professional token: stricter than the token, which is always safe.
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-e2e-'));
});

afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

/** The simulator's own closed bars of a series at its current market time, by start. */
function marketBars(
  code: string,
  klineType: number,
  count: number,
  s: Simulator = sim,
): Map<number, { open: number; high: number; low: number; close: number; volume: number; turnover: number }> {
  const bars = s.market.bars(code, klineType, s.marketNow(), count).filter((b) => !b.forming);
  return new Map(bars.map((b) => [b.startMs, b]));
}

function expectExact(
  rows: readonly (Row & { klineType: number })[],
  code: string,
  klineType: number,
  s: Simulator = sim,
): number[] {
  const mine = rows.filter((r) => r.code === code && r.klineType === klineType);
  const starts = mine.map((r) => Date.parse(r.ts)).sort((a, b) => a - b);
  expect(new Set(starts).size).toBe(starts.length); // no duplicate
  const market = marketBars(code, klineType, 3_000, s);
  // The wire carries prices rounded to the product's decimals.
  const decimals = s.market.product(code)!.priceDecimals;
  const wire = (v: number): number => Number(v.toFixed(decimals));
  for (const r of mine) {
    const m = market.get(Date.parse(r.ts));
    expect(m, `${code} ${r.ts} exists on the market`).toBeDefined();
    expect([r.open, r.high, r.low, r.close]).toEqual([
      wire(m!.open),
      wire(m!.high),
      wire(m!.low),
      wire(m!.close),
    ]);
  }
  return starts;
}

/** `backfill` of `codes` into `out` as NDJSON. */
const backfillArgs = (codes: string, klineType: string, bars: number, out: string): string[] => [
  'backfill',
  '--codes',
  codes,
  '--kline-type',
  klineType,
  '--bars',
  String(bars),
  '--out',
  out,
  '--format',
  'ndjson',
];

describe('quoteflow backfill (e2e)', () => {
  it('writes exactly N closed bars per code, equal to the market, with zero refusals and nothing on stdout', async () => {
    const out = join(work, 'backfill');
    const since = Date.now();
    const r = await quoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT,AAPL.US',
        '--kline-type',
        '1',
        '--bars',
        '700',
        '--out',
        out,
        '--format',
        'ndjson',
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const rows = await readKline(out);
    const btc = expectExact(rows, 'BTCUSDT', 1);
    expect(btc).toHaveLength(700); // crypto pages back: two /kline pages
    for (let i = 1; i < btc.length; i++) expect(btc[i]! - btc[i - 1]!).toBe(60_000);
    const aapl = expectExact(rows, 'AAPL.US', 1);
    expect(aapl.length).toBeGreaterThan(0);
    expect(aapl.length).toBeLessThanOrEqual(500); // stocks: one page only…
    expect(r.stderr).toMatch(/cannot (page|go) back/); // …and it says so
    expect(await readdir(out)).not.toContain('.staging'); // no empty directory left behind
    expect(sim.log.filter({ sinceMs: since }).filter((e) => e.refusedBy !== undefined)).toEqual([]);
  });

  it('takes --kline-types as well as --kline-type (a list of several), and sync takes --kline-type', async ({
    expect,
  }) => {
    const out = join(work, 'spellings');
    const plural = backfillArgs('BTCUSDT', '1,8', 5, out).map((a) =>
      a === '--kline-type' ? '--kline-types' : a,
    );
    const backfill = await quoteflow(plural, env());
    expect(backfill.code, backfill.stderr).toBe(0);
    const rows = await readKline(out);
    for (const klineType of [1, 8]) expect(expectExact(rows, 'BTCUSDT', klineType)).toHaveLength(5);
    // sync reads the singular spelling as its list: its kline type is checked against the code.
    const sync = await quoteflow(
      ['sync', '--codes', 'AAPL.US', '--kline-type', '7', '--bars', '3', '--out', out],
      env(),
    );
    expect(sync.code).toBe(2);
    expect(sync.stderr).toContain('--kline-type 7: stock and index codes have no 4-hour bars');
    const both = await quoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT',
        '--kline-type',
        '1',
        '--kline-types',
        '8',
        '--bars',
        '5',
        '--out',
        out,
      ],
      env(),
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--kline-types and --kline-type');
  });

  it('grows the history: --bars 50 then --bars 500 into one --out gives the 500 most recent bars, each once', async () => {
    const out = join(work, 'grow');
    const args = (bars: number) => backfillArgs('BTCUSDT,ETHUSDT', '1', bars, out);
    const first = await quoteflow(args(50), env());
    expect(first.code, first.stderr).toBe(0);
    const second = await quoteflow(args(500), env());
    expect(second.code, second.stderr).toBe(0);
    const rows = await readKline(out);
    for (const code of ['BTCUSDT', 'ETHUSDT']) {
      const starts = expectExact(rows, code, 1);
      // 500, plus the bar that closed between the two runs if a minute turned.
      expect(starts.length, code).toBeGreaterThanOrEqual(500);
      expect(starts.length, code).toBeLessThanOrEqual(501);
      for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBe(60_000);
      const newestClosed = Math.max(...marketBars(code, 1, 3).keys());
      expect(starts.at(-1)! >= newestClosed - 60_000, code).toBe(true);
    }
  });

  it("grows a stock's history: --bars 50 then --bars 500 gives every closed bar of its one latest page, each once", async () => {
    const out = join(work, 'grow-stock');
    const args = (bars: number) => backfillArgs('AAPL.US', '1', bars, out);
    const first = await quoteflow(args(50), env());
    expect(first.code, first.stderr).toBe(0);
    const since = Date.now();
    const second = await quoteflow(args(500), env());
    expect(second.code, second.stderr).toBe(0);
    const starts = expectExact(await readKline(out), 'AAPL.US', 1);
    // Stocks cannot page back (provider facts): what the service has for them is the latest page,
    // read first by the growth. Its closed bars are 500 while the market is closed, 499 while open.
    const read = sim.log.filter({ endpoint: 'kline', family: 'stock', sinceMs: since })[0]!;
    const page = sim.market.bars('AAPL.US', 1, read.marketMs, 500);
    const reachable = page.filter((b) => !b.forming);
    // Consecutive bars of the market from the page's oldest: min(500, reachable) of them, plus a
    // bar that closed after the read if a minute turned.
    const market = [...marketBars('AAPL.US', 1, 3_000).keys()];
    const from = market.indexOf(page[0]!.startMs);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(starts).toEqual(market.slice(from, from + starts.length));
    expect(starts.length).toBeGreaterThanOrEqual(Math.min(500, reachable.length));
    expect(starts.length).toBeLessThanOrEqual(Math.min(500, reachable.length) + 1);
    // A shortfall is said only when the page truly lacks one of the 500.
    if (reachable.length >= 500) expect(second.stderr).not.toMatch(/cannot (page|go) back/);
    else
      expect(second.stderr).toMatch(
        /AAPL\.US kline_type 1: codes other than forex, precious metals and crypto cannot page backwards/,
      );
  });

  it('says on stderr, with the code and the counts, when the service has fewer bars than --bars', async () => {
    // The simulator holds 800 days of history (its default): about 115 weekly bars, fewer than 200.
    const out = join(work, 'short');
    const r = await quoteflow(backfillArgs('BTCUSDT', '9', 200, out), env());
    expect(r.code, r.stderr).toBe(0);
    const starts = expectExact(await readKline(out), 'BTCUSDT', 9);
    const closed = [...marketBars('BTCUSDT', 9, 3_000).keys()];
    expect(closed.length).toBeLessThan(200);
    expect(starts).toEqual(closed); // every closed bar the service has, each once
    const warnings = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; code?: string });
    expect(warnings).toContainEqual(
      expect.objectContaining({
        code: 'BTCUSDT',
        msg: `BTCUSDT kline_type 9: the service returned no older bars; got ${closed.length} of 200 closed bars`,
      }),
    );
    expect(r.stderr).toMatch(/cannot go back 200 bars for 1 series/);
  });

  it('inspect reports what a backfill wrote, without a request or a token, as JSON and as a table', async () => {
    const out = join(work, 'inspect');
    const r = await quoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT,ETHUSDT',
        '--kline-type',
        '1',
        '--bars',
        '30',
        '--out',
        out,
        '--format',
        'ndjson',
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const requestsBefore = sim.log.entries().length;
    // No service options at all: inspect reads files only.
    const bare = { QUOTEFLOW_BASE_URL: '', QUOTEFLOW_TOKEN: '' };
    // The three inspects at once: they only read.
    const [json, table, missing] = await Promise.all([
      quoteflow(['inspect', '--out', out, '--format', 'json'], bare),
      quoteflow(['inspect', '--out', out], bare),
      quoteflow(['inspect', '--out', join(work, 'no-such-dir')], bare),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      datasets: {
        kline: {
          files: number;
          series: {
            code: string;
            kline_type: number;
            rows: number;
            first: string;
            last: string;
            gaps: unknown[];
          }[];
        };
        depth: { files: number };
      };
    };
    expect(doc.datasets.kline.files).toBeGreaterThan(0);
    expect(doc.datasets.depth.files).toBe(0);
    const rows = await readKline(out);
    for (const code of ['BTCUSDT', 'ETHUSDT']) {
      const s = doc.datasets.kline.series.find((x) => x.code === code)!;
      const starts = rows.filter((x) => x.code === code).map((x) => Date.parse(x.ts));
      expect(s).toMatchObject({ kline_type: 1, rows: 30, gaps: [] });
      expect(s.first).toBe(new Date(Math.min(...starts)).toISOString());
      expect(s.last).toBe(new Date(Math.max(...starts)).toISOString());
    }
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n').filter((l) => /^(BTCUSDT|ETHUSDT)\s+1\s+30\s/.test(l))).toHaveLength(2);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--out');
    expect(sim.log.entries().length).toBe(requestsBefore);
  });

  it('keeps the data exact when the service fails, cuts bodies and repeats bars', async () => {
    const out = join(work, 'faults');
    sim.setFaults([
      { kind: 'http-5xx', endpoint: 'kline', times: 2 },
      { kind: 'truncated', endpoint: 'kline', times: 1 },
      { kind: 'kline-newest-first-repeated', endpoint: 'kline', times: 2 },
    ]);
    try {
      const since = Date.now();
      const r = await quoteflow(
        [
          'backfill',
          '--codes',
          'ETHUSDT',
          '--kline-type',
          '5',
          '--bars',
          '120',
          '--out',
          out,
          '--format',
          'ndjson',
        ],
        env(),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(sim.log.filter({ sinceMs: since }).some((e) => e.faults.length > 0)).toBe(true);
      const starts = expectExact(await readKline(out), 'ETHUSDT', 5);
      expect(starts).toHaveLength(120);
      expect(sim.log.filter({ sinceMs: since }).filter((e) => e.refusedBy !== undefined)).toEqual([]);
    } finally {
      sim.setFaults([]);
    }
  });
});

// At once: each runs one short command of its own, and none counts the simulator's requests.
describe.concurrent('quoteflow errors (e2e)', () => {
  it('exits 3 on a bad token, and the token is nowhere in stdout, stderr or files', async ({ expect }) => {
    const out = join(work, 'bad-token');
    const r = await quoteflow(
      [
        'backfill',
        '--codes',
        'BTCUSDT',
        '--kline-type',
        '1',
        '--bars',
        '10',
        '--out',
        out,
        '--token',
        BAD_TOKEN,
      ],
      env(),
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/token invalid/);
    expect(r.stdout + r.stderr).not.toContain(BAD_TOKEN);
    for (const file of await listFiles(out)) expect(await readFile(file, 'utf8')).not.toContain(BAD_TOKEN);
  });

  it.for<[string[], string]>([
    [['backfill', '--codes', 'BTCUSDT', '--kline-type', '11', '--bars', '10'], '--kline-type'],
    [['backfill', '--codes', 'BTCUSDT', '--kline-type', '1', '--bars', '-3'], '--bars'],
    [['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '10', '--format', 'csv'], '--format'],
    [['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '10', '--plan', 'gold'], '--plan'],
    [['sync', '--kline-types', '1', '--bars', '10'], '--codes'],
    [['sync', '--codes', 'BTCUSDT', '--bars', '10'], '--kline-types (or --kline-type) is required'],
    [['backfill', '--codes', 'BTCUSDT', '--kline-types', '11', '--bars', '10'], '--kline-types'],
  ])('exits 2 naming the flag for %j, writing nothing', async ([args, flag], { expect }) => {
    const out = join(work, `usage-${flag}`);
    const r = await quoteflow([...args, '--out', out], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(flag);
    expect(r.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 naming --base-url when neither the flag nor QUOTEFLOW_BASE_URL is given', async ({
    expect,
  }) => {
    const out = join(work, 'no-url');
    const r = await quoteflow(
      ['backfill', '--codes', 'BTCUSDT', '--kline-type', '1', '--bars', '10', '--out', out],
      { QUOTEFLOW_TOKEN: TOKEN, QUOTEFLOW_BASE_URL: '' },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--base-url');
    expect(existsSync(out)).toBe(false);
  });
});

describe('quoteflow sync (e2e)', () => {
  it('survives kill -9 in the middle: after a restart no gap, no duplicate, no partial file', async () => {
    // A simulator of this test's own whose market can move on while the sync is down: its clock is
    // the real one plus an offset that only grows, so the service is never behind the CLI's clock
    // (a bar is never taken for final early by time; finality by a newer bar does not mind).
    let aheadMs = 0;
    const market = await startSimulator({
      port: 0,
      tokens: { [TOKEN]: 'professional' },
      seed: 11,
      clock: { now: () => Date.now() + aheadMs },
    });
    try {
      const out = join(work, 'sync');
      const state = join(out, 'state.json');
      const flags =
        'sync --codes BTCUSDT,ETHUSDT --kline-types 1 --bars 30 --format ndjson --checkpoint-ms 1000';
      const args = [...flags.split(' '), '--out', out, '--state', state];
      const env = { QUOTEFLOW_BASE_URL: market.url, QUOTEFLOW_TOKEN: TOKEN, QUOTEFLOW_PLAN: 'basic' };
      const since = market.marketNow();
      const first = start(args, env);
      // Once a checkpoint with the backfill has landed, kill without warning.
      await vi.waitFor(
        async () => {
          expect(existsSync(state)).toBe(true);
          const rows = await readKline(out);
          for (const code of ['BTCUSDT', 'ETHUSDT'])
            expect(rows.filter((r) => r.code === code).length).toBeGreaterThanOrEqual(30);
        },
        { timeout: 60_000, interval: 100 },
      );
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      // The market moves on while the sync is down: past the next 1-minute close, so the restart
      // has bars to catch up on.
      const closedWhileDownMs = Math.ceil((market.marketNow() + 1) / 60_000) * 60_000;
      aheadMs += closedWhileDownMs + 1_000 - market.marketNow();
      // Restarted until it caught up (a checkpoint a second), then stopped.
      const second = start(args, env);
      await vi.waitFor(
        async () => {
          expect(second.child.exitCode).toBeNull();
          const rows = await readKline(out);
          for (const code of ['BTCUSDT', 'ETHUSDT'])
            expect(
              Math.max(...rows.filter((r) => r.code === code).map((r) => Date.parse(r.ts))),
            ).toBeGreaterThanOrEqual(closedWhileDownMs - 60_000);
        },
        { timeout: 60_000, interval: 100 },
      );
      second.child.kill('SIGTERM');
      const restarted = await second.done;
      expect(restarted.code, restarted.stderr).toBe(0);
      expect(restarted.stdout).toBe('');
      const rows = await readKline(out);
      for (const code of ['BTCUSDT', 'ETHUSDT']) {
        const starts = expectExact(rows, code, 1, market);
        expect(starts.length).toBeGreaterThanOrEqual(30);
        for (let i = 1; i < starts.length; i++)
          expect(starts[i]! - starts[i - 1]!, `${code} contiguous`).toBe(60_000);
        // The bar that closed while the sync was down is there.
        expect(starts.at(-1)!, `${code} caught up`).toBeGreaterThanOrEqual(closedWhileDownMs - 60_000);
      }
      expect((await listFiles(join(out, 'kline'))).every((f) => f.endsWith('.ndjson'))).toBe(true);
      expect(
        market.log
          .filter({ sinceMs: since })
          .filter((e) => e.refusedBy !== undefined)
          .map((e) => [e.endpoint, e.refusedBy, e.arrivalMs - since]),
      ).toEqual([]);
    } finally {
      await market.close();
    }
  });

  it('stops on SIGTERM within 10 s, flushes and exits 0', async () => {
    const out = join(work, 'sigterm');
    const run = start(
      [
        'sync',
        '--codes',
        'BTCUSDT',
        '--kline-types',
        '1',
        '--bars',
        '5',
        '--out',
        out,
        '--format',
        'ndjson',
        '--state',
        join(out, 's.json'),
      ],
      env(),
    );
    // Once it synced for a while: backfilled (its /kline answered), then a live poll answered (the
    // codes are checked by a /batch-kline before: that one comes before the /kline). Nothing is
    // committed yet (the first checkpoint is 30 s away): the stop's flush writes the state and bars.
    const startedAt = Date.now();
    await vi.waitFor(
      () => {
        const backfill = sim.log.filter({ endpoint: 'kline', sinceMs: startedAt }).find((e) => e.done);
        expect(backfill).toBeDefined();
        const polls = sim.log.filter({ endpoint: 'batch-kline', sinceMs: backfill!.arrivalMs });
        expect(polls.some((e) => e.done)).toBe(true);
      },
      { timeout: 60_000, interval: 100 },
    );
    expect(existsSync(join(out, 's.json'))).toBe(false);
    const t0 = Date.now();
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(out, 's.json'))).toBe(true);
    expect(expectExact(await readKline(out), 'BTCUSDT', 1).length).toBeGreaterThanOrEqual(5);
  });
});
