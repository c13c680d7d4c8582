// End-to-end: what a person sees of a long command on a real terminal (tmux, read back with
// capture-pane) and what a script sees with stderr piped, against the simulator (real clock).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { QUOTEFLOW_BIN, runQuoteflow } from './support/quoteflow-process.js';

const run = promisify(execFile);
const TOKEN = 'cli-terminal-token-0c4d';
const SESSION = `quoteflow-test-${process.pid}`;

let sim: Simulator;
let work: string;
const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
});
const args = (out: string) => [
  'sync',
  '--codes',
  'BTCUSDT,ETHUSDT,AAPL.US',
  '--kline-types',
  '1',
  '--bars',
  '1200',
  '--out',
  out,
  '--duration',
  '6',
];

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 12 });
  work = await mkdtemp(join(tmpdir(), 'qf-terminal-'));
});

afterAll(async () => {
  await run('tmux', ['kill-session', '-t', SESSION]).catch(() => undefined);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const pane = async (): Promise<string> =>
  (await run('tmux', ['capture-pane', '-p', '-J', '-t', SESSION])).stdout;

describe('a long command', () => {
  it('on a real terminal (tmux): progress bars, a live status line and pretty logs, then exit 0', async () => {
    const vars = Object.entries(env()).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const command = [QUOTEFLOW_BIN, ...args(join(work, 'tty'))].join(' ');
    await run('tmux', [
      'new-session',
      '-d',
      '-s',
      SESSION,
      '-x',
      '160',
      '-y',
      '40',
      ...vars,
      `${command}; echo "exit=$?"; sleep 120`,
    ]);
    let screen = '';
    const deadline = Date.now() + 60_000;
    while (!/exit=\d+/.test(screen) && Date.now() < deadline) {
      await sleep(250);
      screen = await pane();
    }
    expect(screen).toMatch(/exit=0/);
    // The overall bar reached every series, the live line counted cycles, logs are pretty text.
    expect(screen).toMatch(/overall\s+\[█+\] 3\/3 series done/);
    expect(screen).toMatch(/live\s+cycles [1-9]\d*\s+closed bars \d+/);
    expect(screen).toMatch(/^\d\d:\d\d:\d\d INFO {2}backfill done/m);
    expect(screen).toMatch(/^\d\d:\d\d:\d\d INFO {2}sync stopped: sinks flushed/m);
    expect(screen).not.toContain('{"level"');
    // AAPL.US cannot page back past 500 bars: said once as it happens and once in the summary.
    expect(screen.match(/cannot page backwards/g)?.length).toBe(1);
    expect(screen).toMatch(/cannot go back 1200 bars for 1 series/);
  });

  it('with stderr piped: JSON warnings only, plus a one-line status now and then, no bars', async () => {
    const r = await runQuoteflow(args(join(work, 'piped')), { ...env(), QUOTEFLOW_STATUS_INTERVAL_S: '1' });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.msg === 'status').length).toBeGreaterThanOrEqual(3);
    expect(lines.every((l) => l.level >= 40 || l.msg === 'status')).toBe(true);
    expect(r.stderr).not.toContain('█');
  });
});
