import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

/** Runs the CLI in-process and collects what it wrote. */
async function run(argv: string[], env: Record<string, string> = {}, cwd = process.cwd()) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runCli(argv, { stdout, stderr, env, cwd });
  return { code, out, err };
}

describe('runCli', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'qf-cli-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the plan estimate as one JSON document on stdout and nothing on stderr', async () => {
    const r = await run(
      ['plan', '--codes', 'AAPL.US,BTCUSDT', '--kline-types', '1,8', '--bars', '600', '--format', 'json'],
      {
        QUOTEFLOW_PLAN: 'premium',
      },
    );
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const doc = JSON.parse(r.out) as {
      plan: string;
      estimate: { series: number; backfill: { requests: number } };
      smallest_plan: string;
    };
    expect(doc.plan).toBe('premium');
    expect(doc.estimate.series).toBe(4);
    // AAPL.US one page per type; BTCUSDT needs 601 bars = 2 pages per type.
    expect(doc.estimate.backfill.requests).toBe(2 + 4);
    expect(doc.smallest_plan).toBe('basic');
    // snake_case throughout, as every JSON of quoteflow (run, inspect, yesterday-close, the datasets).
    expect(r.out).not.toMatch(/"[a-z]+[A-Z]\w*":/);
  });

  it('takes --kline-type as a spelling of --kline-types (one kline type or several), not both', async () => {
    const args = ['plan', '--codes', 'AAPL.US,BTCUSDT', '--bars', '600', '--format', 'json'];
    const plural = await run([...args, '--kline-types', '1,8']);
    const singular = await run([...args, '--kline-type', '1,8']);
    expect(singular.code, singular.err).toBe(0);
    expect(singular.out).toBe(plural.out);
    const both = await run([...args, '--kline-type', '1', '--kline-types', '8']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('--kline-types and --kline-type are one flag spelt two ways; give one');
    const none = await run(args);
    expect(none.code).toBe(2);
    expect(none.err).toContain('--kline-types (or --kline-type) is required');
  });

  it('lets --plan win over QUOTEFLOW_PLAN and prints a table for people', async () => {
    const r = await run(
      ['plan', '--codes', 'AAPL.US', '--kline-types', '8', '--bars', '10', '--plan', 'free'],
      {
        QUOTEFLOW_PLAN: 'premium',
      },
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^plan\s+free: fits/m);
    expect(r.out).toMatch(/^professional\s+yes/m);
  });

  it('shows, per market, how much of the week it trades and its refresh while it does', async () => {
    const r = await run(['plan', '--codes', 'AAPL.US,700.HK,BTCUSDT', '--kline-types', '1', '--bars', '10']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/live polling by market/);
    // 6.5 hours × 5 days counted in 5-minute steps, the step that starts at the close included: 79 × 5.
    expect(r.out).toMatch(/^US\s+1\s+19\.6% of the week\s+\S+/m);
    expect(r.out).toMatch(/^crypto\s+1\s+100\.0% of the week/m);
  });

  it('reads codes from --codes-file, skipping comments and blank lines', async () => {
    const file = join(dir, 'codes.txt');
    await writeFile(file, '# universe\nAAPL.US\n\n700.HK  # hk\nAAPL.US\n');
    const r = await run([
      'plan',
      '--codes-file',
      file,
      '--kline-types',
      '1',
      '--bars',
      '5',
      '--format',
      'json',
    ]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { estimate: { series: number } }).estimate.series).toBe(2);
  });

  it.each([
    [['plan', '--kline-types', '1', '--bars', '5'], /--codes or --codes-file is required/],
    [['plan', '--codes', 'A.US', '--kline-types', '0', '--bars', '5'], /--kline-types/],
    [['plan', '--codes', 'A.US', '--kline-types', '1', '--bars', 'x'], /--bars/],
    [['plan', '--codes', 'A.US', '--kline-types', '1', '--bars', '5', '--format', 'xml'], /--format/],
    [['plan', '--codes', 'A.US', '--kline-types', '1', '--bars', '5', '--frobnicate'], /--frobnicate/],
    [['plan', '--codes', 'A.US', '--kline-types', '1'], /--bars/],
    [['plan', '--codes-file', '/nonexistent/codes.txt', '--kline-types', '1', '--bars', '5'], /--codes-file/],
  ])('exits 2 naming the flag for bad usage %j, with nothing on stdout', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('exits 2 for a bad QUOTEFLOW_PLAN, naming the variable', async () => {
    const r = await run(['plan', '--codes', 'A.US', '--kline-types', '1', '--bars', '5'], {
      QUOTEFLOW_PLAN: 'gold',
    });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/QUOTEFLOW_PLAN/);
  });

  it('prints help for a command on stdout and exits 0', async () => {
    const r = await run(['plan', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Usage: quoteflow plan/);
    expect(r.out).toMatch(/--kline-types/);
  });

  it('never echoes a token, even in a usage error', async () => {
    const token = 'sekrit-token-4711';
    const r = await run(['plan', '--token', token, '--codes', 'A.US']);
    expect(r.code).toBe(2);
    expect(r.out + r.err).not.toContain(token);
    expect(await readdir(dir)).toEqual([]);
  });
});
