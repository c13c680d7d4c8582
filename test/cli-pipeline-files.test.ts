// End-to-end: pipeline files (`quoteflow run`) with ${ENV} references, --dry-run, the stdout sink
// and operators, and every example file of examples/pipelines/ run against the simulator (strict
// limits, real clock: the CLI is another process) or a real Kafka broker.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { consumeWithKafkajs, kafkaBrokers, uniquePrefix } from './support/kafka.js';
import { dataFilesUnder, runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'cli-pipeline-files-token-5d1c';
const EXAMPLES = resolve(import.meta.dirname, '../examples/pipelines');
const MINUTE = 60_000;

let sim: Simulator;
let work: string;
const env = (more: Record<string, string> = {}): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  ...more,
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'qf-pipeline-files-'));
});

afterAll(async () => {
  expect(sim.log.refused().map((e) => [e.endpoint, e.refusedBy])).toEqual([]);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const lines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The exact sum of decimal numbers (summed as scaled integers, as their shortest decimal forms). */
function exactDecimalSum(values: readonly number[]): number {
  const digits = Math.max(...values.map((v) => (String(v).split('.')[1] ?? '').length));
  const scaled = values.reduce((sum, v) => {
    expect(String(v)).toMatch(/^\d+(\.\d+)?$/);
    const [whole, fraction = ''] = String(v).split('.');
    return sum + BigInt(whole! + fraction.padEnd(digits, '0'));
  }, 0n);
  const text = scaled.toString().padStart(digits + 1, '0');
  return Number(digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`);
}

describe('quoteflow run --dry-run', () => {
  it('checks a valid file and says what would run, without a request or a file', async () => {
    const out = join(work, 'dry-out');
    const before = sim.log.length;
    const r = await runQuoteflow(
      ['run', '--dry-run', join(EXAMPLES, 'kline-to-parquet.yaml')],
      env({ OUT: out, CODES: 'BTCUSDT,AAPL.US' }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/kline-to-parquet\.yaml: valid, 1 pipeline on plan professional, for 60 s/);
    expect(r.stdout).toMatch(/bars: kline 2 codes × types 1,8, 200 bars -> files .*dry-out/);
    expect(r.stdout).toMatch(/plan: backfill \d+ \/kline requests/);
    expect(sim.log.length).toBe(before);
    expect(existsSync(out)).toBe(false);
  });

  it('names file:line:field for an unset variable, a bad value and a type stocks lack (exit 2, no request)', async () => {
    const file = join(work, 'broken.yaml');
    const before = sim.log.length;
    await writeFile(
      file,
      'version: 1\npipelines:\n  - source:\n      kline:\n        codes: [AAPL.US]\n        klineTypes: [7]\n    sinks:\n      files: { out: "${NOWHERE}" }\n',
    );
    const r = await runQuoteflow(['run', '--dry-run', file], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /broken\.yaml:8: pipelines\[0\]\.sinks\.files\.out: environment variable NOWHERE is not set/,
    );
    await writeFile(file, (await readFile(file, 'utf8')).replace('"${NOWHERE}"', 'x'));
    const types = await runQuoteflow(['run', '--dry-run', file], env());
    expect(types.code).toBe(2);
    expect(types.stderr).toMatch(
      /broken\.yaml:6: pipelines\[0\]\.source\.kline\.klineTypes\[0\]: stock and index codes have no 4-hour bars/,
    );
    expect(sim.log.length).toBe(before);
  });
});

describe('quoteflow run --help', () => {
  it('shows an example that runs when copied as it is', async () => {
    const help = await runQuoteflow(['run', '--help'], {});
    expect(help.code).toBe(0);
    const example = help.stdout.slice(help.stdout.indexOf('version: 1'));
    const file = join(work, 'from-help.yaml');
    await writeFile(file, example);
    const r = await runQuoteflow(['run', '--dry-run', file], env(), work);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/valid, 3 pipelines on plan professional, for 60 s/);
  });
});

describe('quoteflow run --schema', () => {
  it("prints the file format's JSON Schema: every source kind, sink and operator, the plans", async () => {
    const r = await runQuoteflow(['run', '--schema'], {});
    expect(r.code, r.stderr).toBe(0);
    const schema = JSON.parse(r.stdout) as {
      required: string[];
      properties: {
        service: { properties: { plan: { anyOf: { enum?: string[]; pattern?: string }[] } } };
        pipelines: { anyOf: { type?: string; items?: { anyOf: unknown[] } }[] };
      };
    };
    expect(schema.required).toEqual(expect.arrayContaining(['version', 'pipelines']));
    // A plan is one of the plans, or a ${ENV} reference resolved when the file is read.
    const planChoices = schema.properties.service.properties.plan.anyOf;
    expect(planChoices.find((c) => c.enum)?.enum).toContain('professional');
    expect(planChoices.some((c) => c.pattern?.includes('\\$\\{'))).toBe(true);
    const pipelineList = schema.properties.pipelines.anyOf.find((c) => c.type === 'array');
    const text = JSON.stringify(pipelineList?.items?.anyOf);
    for (const key of [
      'kline',
      'depth',
      'suspensions',
      'stdout',
      'finalOnly',
      'resample',
      'yesterdayClose',
      'dedupe',
    ])
      expect(text).toContain(`"${key}"`);
    const none = await runQuoteflow(['run'], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/a pipeline file is required/);
  });
});

describe('the stdout sink and operators', () => {
  it('streams closed 1-minute bars, 15-minute bars made of exactly those bars, and the previous close', async () => {
    const r = await runQuoteflow(
      ['run', join(EXAMPLES, 'bars-to-stdout.yaml')],
      // 60 closed 1-minute bars hold at least three whole 15-minute periods.
      env({ DURATION: '6', CODES: 'BTCUSDT' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const records = lines(r.stdout);
    const minutes = records.filter((x) => x['kline_type'] === 1 && !('period_minutes' in x));
    const quarters = records.filter((x) => x['period_minutes'] === 15);
    const closes = records.filter((x) => 'prev_close' in x);
    expect(minutes.length).toBeGreaterThanOrEqual(60);
    expect(minutes.every((m) => m['final'] === true)).toBe(true);
    // Independent oracle: each whole 15-minute period from the 1-minute bars printed beside it.
    const byStart = new Map(minutes.map((m) => [Date.parse(m['ts'] as string), m]));
    const whole = quarters.filter((q) => q['partial'] === false);
    expect(whole.length).toBeGreaterThanOrEqual(3);
    for (const q of whole) {
      const start = Date.parse(q['ts'] as string);
      expect(start % (15 * MINUTE)).toBe(0);
      const parts = Array.from({ length: 15 }, (_, i) => byStart.get(start + i * MINUTE)!);
      expect(parts.every((p) => p !== undefined)).toBe(true);
      expect(q).toMatchObject({
        code: 'BTCUSDT',
        source_kline_type: 1,
        final: true,
        open: parts[0]!['open'],
        close: parts[14]!['close'],
        high: Math.max(...parts.map((p) => p['high'] as number)),
        low: Math.min(...parts.map((p) => p['low'] as number)),
      });
      // Sums printed as the sources' decimals add up, without binary floating-point noise.
      for (const field of ['volume', 'turnover'])
        expect(q[field], field).toBe(exactDecimalSum(parts.map((p) => p[field] as number)));
    }
    // The previous close as of the run, not the 60 past ones the history holds: the newest daily
    // bar (the day in progress) is the first record's latest, then only what changes follows.
    expect(closes.length).toBeGreaterThan(0);
    expect(closes.length).toBeLessThan(10);
    const newestDay = Math.max(
      ...records.filter((x) => x['kline_type'] === 8).map((x) => Date.parse(x['ts'] as string)),
    );
    expect(Date.parse(closes[0]!['latest_ts'] as string)).toBeGreaterThanOrEqual(newestDay);
    expect(closes.at(-1)).toMatchObject({
      code: 'BTCUSDT',
      prev_date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
    });
    // One key style in the stream: the datasets' snake_case column names.
    const keys = new Set(records.flatMap((x) => Object.keys(x)));
    expect([...keys].filter((k) => !/^[a-z0-9_]+$/.test(k))).toEqual([]);
  });
});

describe('every example pipeline file runs', () => {
  it('examples/pipelines holds the files these tests run', async () => {
    expect((await readdir(EXAMPLES)).sort()).toEqual([
      'bars-to-stdout.yaml',
      'depth-and-suspensions.yaml',
      'depth-to-kafka.yaml',
      'depth-to-secured-kafka.yaml', // run by kafka-security.test.ts, against the secured listeners
      'kline-to-parquet.yaml',
    ]);
  });

  it('kline-to-parquet.yaml writes closed bars of every code and type', async () => {
    const out = join(work, 'kline-example');
    const r = await runQuoteflow(
      ['run', join(EXAMPLES, 'kline-to-parquet.yaml')],
      env({ OUT: out, DURATION: '5', CODES: 'BTCUSDT,AAPL.US' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const files = await dataFilesUnder(join(out, 'kline'));
    expect(files.some((f) => f.includes('kline_type=1'))).toBe(true);
    expect(files.some((f) => f.includes('kline_type=8'))).toBe(true);
    expect(files.every((f) => f.endsWith('.parquet'))).toBe(true);
  });

  it('depth-and-suspensions.yaml writes new depth ticks and prints whole suspension records', async () => {
    const out = join(work, 'depth-example');
    const r = await runQuoteflow(
      ['run', join(EXAMPLES, 'depth-and-suspensions.yaml')],
      env({ OUT: out, DURATION: '4' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const ticks = (
      await Promise.all((await dataFilesUnder(join(out, 'depth'))).map((f) => readFile(f, 'utf8')))
    )
      .flatMap((t) => lines(t))
      .map((t) => `${String(t['code'])}#${String(t['seq'])}`);
    expect(ticks.length).toBeGreaterThan(0);
    expect(new Set(ticks).size).toBe(ticks.length);
    const records = lines(r.stdout);
    expect(records.length).toBeGreaterThan(0);
    expect(
      records.every(
        (s) => s['change'] === 'new' && s['exchange'] === 'nyse' && typeof s['symbol'] === 'string',
      ),
    ).toBe(true);
  });

  it('depth-to-kafka.yaml produces ticks keyed by code to a real broker', async () => {
    const brokers = await kafkaBrokers();
    const prefix = uniquePrefix('pipeline-example');
    const r = await runQuoteflow(
      ['run', join(EXAMPLES, 'depth-to-kafka.yaml')],
      env({ KAFKA_BROKERS: brokers, TOPIC_PREFIX: prefix, DURATION: '4' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const read = (await consumeWithKafkajs(brokers, [`${prefix}.depth`], 1)).get(`${prefix}.depth`) ?? [];
    expect(read.length).toBeGreaterThan(0);
    for (const m of read) expect(m.key).toBe((JSON.parse(m.value) as { code: string }).code);
  });
});
