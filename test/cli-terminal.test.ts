// End-to-end: what a person sees of a long command on a real terminal (tmux, read back with
// capture-pane) and what a script sees with stderr piped, against the simulator (real clock). The
// tests run at once, each on a token of its own (the simulator keeps each token's limits apart), so
// their --duration runs overlap instead of adding up and none of them takes another's quota.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { QUOTEFLOW_BIN, runQuoteflow } from './support/quoteflow-process.js';

const run = promisify(execFile);
const TOKEN = 'cli-terminal-token-0c4d';
/** One token per run at a time, each on the plan the runs assume. */
const TOKENS = ['tty', 'pages', 'quiet', 'json', 'piped'] as const;
type TokenName = (typeof TOKENS)[number];
const SESSION = `quoteflow-test-${process.pid}`;
/**
 * A tmux server of this file's own (its socket name), kept up by a session that idles until the
 * end: other tmux users (other test runs on the machine) cannot touch it, and a new session never
 * meets a server that is exiting because its last session just ended ("server exited unexpectedly").
 */
const tmux = (args: readonly string[]) => run('tmux', ['-L', SESSION, ...args]);

let sim: Simulator;
let work: string;
const env = (token: TokenName): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: `${TOKEN}-${token}`,
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
  sim = await startSimulator({
    port: 0,
    tokens: Object.fromEntries(TOKENS.map((t) => [`${TOKEN}-${t}`, 'professional'])),
    seed: 12,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-terminal-'));
  await tmux(['new-session', '-d', '-s', `${SESSION}-keep`, 'sleep 3600']);
});

afterAll(async () => {
  await tmux(['kill-server']).catch(() => undefined);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const pane = async (session: string): Promise<string> =>
  (await tmux(['capture-pane', '-p', '-J', '-t', session])).stdout;

/**
 * Runs `quoteflow ARGS` on a real terminal (a tmux session of its own) to its end, and returns every
 * distinct screen seen on the way (read every 200 ms), the last one with `exit=N` on it.
 */
async function screensOf(token: TokenName, args: readonly string[]): Promise<string[]> {
  const session = `${SESSION}-${Math.random().toString(36).slice(2, 8)}`;
  const vars = Object.entries(env(token)).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await tmux([
    'new-session',
    '-d',
    '-s',
    session,
    '-x',
    '160',
    '-y',
    '40',
    ...vars,
    `${[QUOTEFLOW_BIN, ...args].join(' ')}; echo "exit=$?"; sleep 120`,
  ]);
  try {
    const screens: string[] = [];
    const deadline = Date.now() + 90_000;
    while (!/exit=\d+/.test(screens.at(-1) ?? '') && Date.now() < deadline) {
      await sleep(200);
      const screen = await pane(session);
      if (screen !== screens.at(-1)) screens.push(screen);
    }
    return screens;
  } finally {
    await tmux(['kill-session', '-t', session]).catch(() => undefined);
  }
}

describe.concurrent('a long command', () => {
  it('on a real terminal (tmux): progress bars, a live status line and pretty logs, then exit 0', async ({
    expect,
  }) => {
    const screens = await screensOf('tty', args(join(work, 'tty')));
    const screen = screens.at(-1)!;
    expect(screen).toMatch(/exit=0/);
    // The overall bar reached every series (on some screen: a warning wider than the terminal wraps
    // to two rows, and the bars' redraw, which counts lines, may then write over the bar's row in
    // the last frame), the live line counted cycles, logs are pretty text.
    const overallDone = /overall\s+\[█+\] (\d+)\/\1 pages \(3\/3 series\) done/;
    expect(
      screens.some((s) => overallDone.test(s)),
      screens.join('\n----\n'),
    ).toBe(true);
    expect(screen).toMatch(/live\s+cycles [1-9]\d*\s+closed bars \d+/);
    expect(screen).toMatch(/^\d\d:\d\d:\d\d INFO {2}backfill done/m);
    expect(screen).toMatch(/^\d\d:\d\d:\d\d INFO {2}sync stopped: sinks flushed/m);
    expect(screen).not.toContain('{"level"');
    // AAPL.US cannot page back past 500 bars: said once as it happens and once in the summary.
    expect(screen.match(/cannot page backwards/g)?.length).toBe(1);
    expect(screen).toMatch(/cannot go back 1200 bars for 1 series/);
  });

  it('counts pages on the overall bar while no series is done yet', async ({ expect }) => {
    // Two crypto series of 3 pages each at one page a second: about 6 s of backfill.
    const screens = await screensOf('pages', [
      'sync',
      '--codes',
      'BTCUSDT,ETHUSDT',
      '--kline-types',
      '1',
      '--bars',
      '1200',
      '--out',
      join(work, 'pages'),
      '--duration',
      '12',
      '--limit',
      'kline-rate=1/1s',
    ]);
    expect(screens.at(-1)).toMatch(/exit=0/);
    const counts = screens.flatMap((screen) => {
      const m = /overall\s+\[[^\]]*\] (\d+)\/(\d+) pages \((\d+)\/2 series\)/.exec(screen);
      return m === null ? [] : [{ pages: Number(m[1]), of: Number(m[2]), series: Number(m[3]) }];
    });
    // The bar moves page by page before the first series is whole.
    expect(
      counts.some((c) => c.pages > 0 && c.pages < c.of && c.series === 0),
      JSON.stringify(counts),
    ).toBe(true);
  });

  it('draws no bars with -q, nor with --log-format json, on a terminal', async ({ expect }) => {
    // Both at once, each on a token of its own.
    const variants = [
      { token: 'quiet', flags: ['-q'] },
      { token: 'json', flags: ['--log-format', 'json'] },
    ] as const;
    const runs = await Promise.all(
      variants.map(({ token, flags }) =>
        screensOf(token, [...args(join(work, `quiet${flags.length}`)), ...flags]),
      ),
    );
    for (const [i, { flags }] of variants.entries()) {
      const screens = runs[i]!;
      const last = screens.at(-1)!;
      expect(last, flags.join(' ')).toMatch(/exit=0/);
      for (const screen of screens) {
        expect(screen, flags.join(' ')).not.toContain('█');
        expect(screen, flags.join(' ')).not.toMatch(/overall|live\s+cycles/);
      }
      // JSON lines stay whole JSON lines: nothing drawn between them.
      if (flags[0] === '--log-format')
        for (const line of last.split('\n').filter((l) => l.startsWith('{')))
          expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    }
  });

  it('with stderr piped: JSON warnings only, plus a one-line status now and then, no bars', async ({
    expect,
  }) => {
    const r = await runQuoteflow(args(join(work, 'piped')), {
      ...env('piped'),
      QUOTEFLOW_STATUS_INTERVAL_S: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.msg === 'status').length).toBeGreaterThanOrEqual(3);
    // The status counts closed bars as they come, not at the files' next commit (every 30 s: none
    // before the stop here).
    const statuses = lines.filter((l) => l.msg === 'status') as unknown as {
      closedBars: number;
      files: number;
    }[];
    expect(
      statuses.some((l) => l.closedBars >= 2 * 1200 && l.files === 0),
      JSON.stringify(statuses),
    ).toBe(true);
    expect(lines.every((l) => l.level >= 40 || l.msg === 'status')).toBe(true);
    expect(r.stderr).not.toContain('█');
  });
});
