// End-to-end (issue 28 item 1): a sync stopped by --duration during its backfill keeps the pages it
// read (committed as they arrive), says per series what is still lacking and does not exit 0; the
// next run fetches only the rest. The built binary against the simulator (strict limits, real clock).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'cli-backfill-stop-token-41c0';

let sim: Simulator;
let work: string;
const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: join(work, 'state'),
  QUOTEFLOW_LOG_FORMAT: 'json',
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 5 });
  work = await mkdtemp(join(tmpdir(), 'qf-backfill-stop-'));
});

afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

/** Bar starts of `code` in the NDJSON dataset under `dir`, sorted. */
async function startsIn(dir: string, code: string): Promise<number[]> {
  const out: number[] = [];
  const files = await readdir(join(dir, 'kline'), { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of files) {
    if (!e.isFile() || !e.name.endsWith('.ndjson')) continue;
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n')) {
      if (line.trim() === '') continue;
      const row = JSON.parse(line) as { code: string; ts: string };
      if (row.code === code) out.push(Date.parse(row.ts));
    }
  }
  return out.sort((a, b) => a - b);
}

/** `backfill` of `bars` 1-minute bars of `code` into `out` as NDJSON. */
function backfillArgs(code: string, out: string, bars = '1200'): string[] {
  return [
    'backfill',
    '--codes',
    code,
    '--kline-type',
    '1',
    '--bars',
    bars,
    '--out',
    out,
    '--format',
    'ndjson',
  ];
}

function expectConsecutiveMinutes(starts: readonly number[]): void {
  expect(new Set(starts).size).toBe(starts.length);
  for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBe(60_000);
}

describe('a backfill cut short', () => {
  it('sync --duration during the backfill: pages kept, the shortfall said (not the old success line); the next run completes it', async () => {
    const out = join(work, 'cut');
    const base = ['--codes', 'BTCUSDT', '--out', out, '--format', 'ndjson'];
    const cut = await runQuoteflow(
      [
        'sync',
        ...base,
        '--kline-types',
        '1',
        '--bars',
        '3000',
        '--duration',
        '5',
        '--limit',
        'kline-rate=1/2s',
      ],
      env(),
    );
    expect(cut.code, cut.stderr).toBe(0); // the contract: sync exits 0 at --duration
    const held = await startsIn(out, 'BTCUSDT');
    // Two or three pages of 500 came in 5 s at one request every 2 s: each committed.
    expect(held.length).toBeGreaterThanOrEqual(999);
    expect(held.length).toBeLessThan(3_000);
    expectConsecutiveMinutes(held);
    expect(cut.stderr).toContain(`BTCUSDT:1 holds ${held.length} of 3000`);
    expect(cut.stderr).toContain('--duration ended the run before the backfill completed');
    expect(cut.stderr).not.toContain('sync stopped: sinks flushed');

    const rest = await runQuoteflow(['backfill', ...base, '--kline-type', '1', '--bars', '3000'], env());
    expect(rest.code, rest.stderr).toBe(0);
    const all = await startsIn(out, 'BTCUSDT');
    // 3,000 then, and whatever closed between the two runs.
    expect(all.length).toBeGreaterThanOrEqual(3_000);
    expect(all.length).toBeLessThanOrEqual(3_002);
    expectConsecutiveMinutes(all);
    expect(all).toEqual(expect.arrayContaining(held));
  });

  it('sync --duration ending while the codes check still waits for its answer: a stop like any other (exit 0, the shortfall said), not a failure', async () => {
    // The check before any file (one /batch-kline) answers after the duration ended: under load,
    // or behind a busy shared quota, it can be the only request a short run gets to send.
    sim.setFaults([{ kind: 'latency', endpoint: 'batch-kline', latencyMs: 4_000, times: 1 }]);
    try {
      const out = join(work, 'checking');
      const since = Date.now();
      const r = await runQuoteflow(
        [
          'sync',
          '--codes',
          'ETHUSDT',
          '--kline-types',
          '1',
          '--bars',
          '100',
          '--out',
          out,
          '--duration',
          '1',
        ],
        env(),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('QF_ABORTED');
      expect(r.stderr).toContain('ETHUSDT:1 holds 0 of 100');
      expect(r.stderr).toContain('--duration ended the run before the backfill completed');
      // Stopped before the backfill began: not one page was asked for.
      expect(sim.log.filter({ endpoint: 'kline', sinceMs: since })).toEqual([]);
    } finally {
      sim.setFaults([]);
    }
  });

  it('backfill rides out a failing service within --retry-budget (more failures in a row than a fixed count of attempts allowed)', async () => {
    const out = join(work, 'flaky');
    // The first /kline request fails five times in a row (the client's four attempts used to end the
    // command), and after that about a quarter of the answers are cut or their connection dropped.
    sim.setFaults([
      { kind: 'http-5xx', endpoint: 'kline', times: 5 },
      { kind: 'truncated', endpoint: 'kline', probability: 0.15 },
      { kind: 'drop', endpoint: 'kline', probability: 0.15 },
    ]);
    const r = await runQuoteflow(backfillArgs('ETHUSDT', out), env());
    sim.setFaults([]);
    expect(r.code, r.stderr).toBe(0);
    const held = await startsIn(out, 'ETHUSDT');
    expect(held.length).toBe(1_200);
    expectConsecutiveMinutes(held);
  });

  it('backfill whose service fails past --retry-budget: exit 1, the pages read kept, the shortfall said', async () => {
    const out = join(work, 'failing');
    const asked = sim.log.count({ endpoint: 'kline' });
    const run = runQuoteflow(
      [...backfillArgs('XRPUSDT', out), '--limit', 'kline-rate=1/2s', '--retry-budget', '3'],
      env(),
    );
    // The newest page answered; every later /kline request fails.
    await vi.waitFor(() => expect(sim.log.count({ endpoint: 'kline' }) - asked).toBe(1), {
      timeout: 20_000,
      interval: 10,
    });
    sim.setFaults([{ kind: 'http-5xx', endpoint: 'kline' }]);
    const r = await run;
    sim.setFaults([]);
    expect(r.code, r.stderr).toBe(1);
    const held = await startsIn(out, 'XRPUSDT');
    expect(held.length).toBeGreaterThanOrEqual(499);
    expect(r.stderr).toContain(`XRPUSDT:1 holds ${held.length} of 1200`);
    expect(r.stderr).toContain('the run failed before the backfill completed');
  });

  it('a dataset that lost a committed file: inspect names it, sync says it at the start and refills the hole', async () => {
    const out = join(work, 'healing');
    for (const bars of ['200', '400', '600']) {
      const r = await runQuoteflow(backfillArgs('XRPUSDT', out, bars), env());
      expect(r.code, r.stderr).toBe(0);
    }
    const files = (await readdir(join(out, 'kline'), { recursive: true })).filter((f) =>
      f.endsWith('.ndjson'),
    );
    const firsts = await Promise.all(
      files.map(async (f) => ({ f, first: await firstStart(join(out, 'kline', f)) })),
    );
    firsts.sort((a, b) => a.first - b.first);
    const lost = `kline/${firsts[1]!.f}`;
    await rm(join(out, lost));
    const inspected = await runQuoteflow(['inspect', '--out', out, '--format', 'json'], env());
    expect(inspected.code, inspected.stderr).toBe(0);
    const json = JSON.parse(inspected.stdout) as {
      datasets: { kline: { missing_files: string[]; series: { gaps: unknown[] }[] } };
    };
    expect(json.datasets.kline.missing_files).toEqual([lost]);
    expect(json.datasets.kline.series[0]!.gaps).toHaveLength(1);
    expect(inspected.stderr).toContain(lost);

    const sync = await runQuoteflow(
      [
        'sync',
        '--codes',
        'XRPUSDT',
        '--kline-types',
        '1',
        '--bars',
        '600',
        '--out',
        out,
        '--format',
        'ndjson',
        '--duration',
        '3',
      ],
      env(),
    );
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain(lost);
    expect(sync.stderr).toMatch(/repaired \d+ bars in 1 series/);
    const held = await startsIn(out, 'XRPUSDT');
    expectConsecutiveMinutes(held);
    const again = await runQuoteflow(['inspect', '--out', out, '--format', 'json'], env());
    expect(JSON.parse(again.stdout)).toMatchObject({
      datasets: { kline: { missing_files: [], series: [{ gaps: [] }] } },
    });
  });
});

/** The first bar start of an NDJSON dataset file (its rows are written oldest first). */
async function firstStart(file: string): Promise<number> {
  const line = (await readFile(file, 'utf8')).split('\n')[0]!;
  return Date.parse((JSON.parse(line) as { ts: string }).ts);
}
