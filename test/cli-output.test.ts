// Output and stderr noise of the built binary against a real simulator and a real Kafka broker:
// no Node process warnings (kafkajs's negative timer), one table header per watch, and derived
// numbers without binary floating-point noise.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { kafkaBrokers, uniquePrefix } from './support/kafka.js';
import { decimalsOf } from '../packages/cli/src/internal/decimals.js';
import { dataFilesUnder, runQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'cli-output-token-77e1';
const words = (text: string): string[] => text.split(' ');
/** How Node prints a process warning on stderr: `(node:1234) TimeoutNegativeWarning: …`. */
const NODE_WARNING = /\(node:\d+\) \w*Warning/;

let sim: Simulator;
let work: string;
// Each test its own token: suspension queries are once a minute per token.
const env = (token = TOKEN): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
});

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional', [`${TOKEN}-table`]: 'professional' },
    seed: 23,
  });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-output-'));
});

afterAll(async () => {
  expect(sim.log.refused()).toEqual([]);
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('with a Kafka sink', () => {
  it('sync, depth and suspensions --watch print no Node process warning and exit 0', async () => {
    const brokers = await kafkaBrokers();
    const runs = await Promise.all([
      runQuoteflow(
        [
          // 6 s: the checks at start (Kafka login and topics, the transactions probe) and the
          // backfill must fit in, with room, on a loaded machine; 3 s left no closed bar at times.
          ...words('sync --codes BTCUSDT --kline-types 1 --bars 5 --duration 6 --out'),
          join(work, 'sync'),
        ].concat(['--kafka', brokers, '--topic-prefix', uniquePrefix('out-sync')]),
        env(),
      ),
      runQuoteflow(
        [
          'depth',
          '--codes',
          'BTCUSDT,ETHUSDT',
          '--kafka',
          brokers,
          '--topic-prefix',
          uniquePrefix('out-depth'),
        ].concat(['--duration', '3']),
        env(),
      ),
      runQuoteflow(
        ['suspensions', '--exchange', 'nyse', '--watch', '--format', 'ndjson', '--kafka', brokers].concat([
          '--topic-prefix',
          uniquePrefix('out-susp'),
          '--duration',
          '3',
        ]),
        env(),
      ),
    ]);
    for (const run of runs) {
      expect(run.stderr).not.toMatch(NODE_WARNING);
      expect(run.code).toBe(0);
    }
    expect(await dataFilesUnder(join(work, 'sync', 'kline'))).not.toEqual([]);
  }, 120_000);
});

describe('suspensions --watch --format table', () => {
  it('prints the header once and every row in the same columns', async () => {
    const run = await runQuoteflow(
      ['suspensions', '--exchange', 'nyse', '--watch', '--format', 'table', '--duration', '2'],
      env(`${TOKEN}-table`),
    );
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n').filter((l) => l !== '');
    const header = lines[0]!;
    expect(lines.filter((l) => l === header)).toHaveLength(1);
    const rows = lines.slice(2);
    expect(rows.length).toBeGreaterThan(1);
    const columnStarts = (l: string): number[] => [...l.matchAll(/ {2}(?=\S)/g)].map((m) => m.index + 2);
    for (const row of rows) expect(columnStarts(header).every((i) => row[i - 1] === ' ')).toBe(true);
  });
});

describe('yesterday-close --format json', () => {
  it('gives change the decimals of the prices it comes from', async () => {
    const codes = 'AAPL.US,700.HK,600519.SH,BTCUSDT,ETHUSDT,DOGEUSDT,EURUSD,EURJPY,GBPUSD,GOLD,HK50,GER40';
    const run = await runQuoteflow(['yesterday-close', '--codes', codes, '--format', 'json'], env());
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as {
      prev_close: number | null;
      latest_price: number;
      change: number | null;
    }[];
    const withChange = rows.filter((r) => r.prev_close !== null && r.change !== null);
    expect(withChange.length).toBeGreaterThan(5);
    for (const r of withChange) {
      const digits = Math.max(decimalsOf(r.prev_close!), decimalsOf(r.latest_price));
      expect(decimalsOf(r.change!)).toBeLessThanOrEqual(digits);
      expect(r.change!).toBeCloseTo(r.latest_price - r.prev_close!, digits);
    }
  });
});
