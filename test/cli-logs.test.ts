// The log flags of every command (contract.md: --log-format, -q, -v, NO_COLOR) and the defaults
// with and without a terminal, against the built binary and a real simulator.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { dataFilesUnder, runQuoteflow, runQuoteflowInTerminal } from './support/quoteflow-process.js';

const TOKEN = 'cli-logs-token-5d0c';
const ESC = '\u001b[';

let sim: Simulator;
let work: string;
const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_LOG_LEVEL: '',
  QUOTEFLOW_LOG_FORMAT: '',
  NO_COLOR: '',
  ...extra,
});

/** stderr's lines as pino records (fails the test when a line is not JSON). */
function jsonLines(stderr: string): { level: number; msg: string }[] {
  return stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-logs-'));
});

afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('without a terminal', () => {
  it('logs JSON at warn by default, plus a periodic status line, and still exits 0', async () => {
    const out = join(work, 'quiet-default');
    const run = await runQuoteflow(
      ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--out', out, '--duration', '3'],
      env({ QUOTEFLOW_STATUS_INTERVAL_S: '1' }),
    );
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stderr);
    const status = lines.filter((l) => l.msg === 'status');
    expect(status.length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.level < 40 && l.msg !== 'status')).toEqual([]);
    expect(await dataFilesUnder(join(out, 'kline'))).not.toEqual([]);
  });

  it('-q drops the status line too; -v adds debug lines', async () => {
    const args = ['depth', '--codes', 'BTCUSDT', '--out', join(work, 'depth-q'), '--duration', '2'];
    const quiet = await runQuoteflow([...args, '-q'], env({ QUOTEFLOW_STATUS_INTERVAL_S: '0.5' }));
    expect(quiet.code).toBe(0);
    expect(jsonLines(quiet.stderr).filter((l) => l.level < 40)).toEqual([]);

    const verbose = await runQuoteflow(
      ['static-info', '--codes', 'AAPL.US', '--format', 'json', '--verbose'],
      env(),
    );
    expect(verbose.code).toBe(0);
    expect(jsonLines(verbose.stderr).some((l) => l.level === 20)).toBe(true);
    // The debug lines went to stderr: stdout is the result alone, one JSON document of the code asked.
    expect((JSON.parse(verbose.stdout) as { code: string }[]).map((i) => i.code)).toEqual(['AAPL.US']);
  });

  it('--log-format pretty (or QUOTEFLOW_LOG_FORMAT=pretty) gives human lines without colour codes', async () => {
    for (const [args, extra] of [
      [['--log-format', 'pretty'], {}],
      [[], { QUOTEFLOW_LOG_FORMAT: 'pretty' }],
    ] as const) {
      const run = await runQuoteflow(['static-info', '--codes', 'AAPL.US', '-v', ...args], env(extra));
      expect(run.code).toBe(0);
      const lines = run.stderr.split('\n').filter((l) => l !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(/^\d\d:\d\d:\d\d (TRACE|DEBUG|INFO |WARN |ERROR) /);
      expect(run.stderr).not.toContain(ESC);
    }
  });

  it('a bad --log-format, QUOTEFLOW_LOG_FORMAT or -q with -v is exit 2 before any request', async () => {
    const before = sim.log.count();
    const base = ['static-info', '--codes', 'AAPL.US'];
    expect((await runQuoteflow([...base, '--log-format', 'xml'], env())).code).toBe(2);
    expect((await runQuoteflow(base, env({ QUOTEFLOW_LOG_FORMAT: 'xml' }))).code).toBe(2);
    expect((await runQuoteflow([...base, '-q', '-v'], env())).code).toBe(2);
    expect(sim.log.count()).toBe(before);
    // The flag wins over the environment.
    expect(
      (await runQuoteflow([...base, '--log-format', 'json'], env({ QUOTEFLOW_LOG_FORMAT: 'xml' }))).code,
    ).toBe(0);
  });
});

describe('on a real terminal', () => {
  it('logs pretty lines with colour, and none with NO_COLOR set', async () => {
    const args = ['static-info', '--codes', 'AAPL.US', '-v'];
    const coloured = await runQuoteflowInTerminal(args, env());
    expect(coloured.code).toBe(0);
    expect(coloured.stdout).toMatch(/^\d\d:\d\d:\d\d \u001b\[\d+mDEBUG/m);

    const plain = await runQuoteflowInTerminal(args, env({ NO_COLOR: '1' }));
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^\d\d:\d\d:\d\d DEBUG /m);
    expect(plain.stdout).not.toContain(ESC);
  });
});
