/**
 * Two `quoteflow sync --redis --kafka` workers on one token (the built binary): one is killed with
 * SIGKILL while it has Kafka transactions going, the other takes its series over, fencing the dead
 * worker's transactional id so that what it left open is aborted at once rather than after the
 * transaction timeout. Read back by kcat with `isolation.level=read_committed`: every final bar of
 * every series once, with the market's values; the files too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readKlineBars } from '@quoteflow/pipelines';
import { startSimulator, syntheticCatalogue, type Simulator } from '@quoteflow/simulator';
import { expectKafkaAndFilesEachOnce } from './support/exactly-once-check.js';
import { kafkaBrokers, uniquePrefix, waitUntil } from './support/kafka.js';
import { startQuoteflow, type QuoteflowChild } from './support/quoteflow-process.js';
import { testRedis, type TestRedis } from './support/redis-server.js';

const TOKEN = 'cluster-kafka-token-91aa';
const PRODUCTS = syntheticCatalogue({ count: 6, classes: ['crypto'] });
const CODES = PRODUCTS.map((p) => p.code);
let redis: TestRedis;
let sim: Simulator;
let out: string;

beforeAll(async () => {
  redis = await testRedis();
  sim = await startSimulator({ tokens: { [TOKEN]: 'premium' }, products: PRODUCTS, historyDays: 2, seed: 8 });
  out = await mkdtemp(join(tmpdir(), 'qf-cluster-kafka-'));
});
afterAll(async () => {
  await sim?.close();
  await redis?.close();
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

/** Series a worker's log says it holds now (its last assignment), and whether it committed to Kafka. */
function held(worker: QuoteflowChild): number {
  const lines = worker
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"msg":"cluster assignment"'));
  return lines.length === 0 ? 0 : (JSON.parse(lines.at(-1)!) as { held: number }).held;
}
const committedToKafka = (worker: QuoteflowChild): boolean =>
  /"sink":"kafka[^"]*","files":0,"committed":[1-9]/.test(worker.stderr());

it('a worker killed mid-transaction is taken over without waiting out its transaction: each final bar once', async () => {
  const brokers = await kafkaBrokers();
  const prefix = uniquePrefix('cluster-kafka');
  const args = [
    'sync',
    '--codes',
    CODES.join(','),
    '--kline-types',
    '1',
    '--bars',
    '100',
    '--out',
    out,
    '--kafka',
    brokers,
    '--topic-prefix',
    prefix,
    '--redis',
    redis.url,
    '--checkpoint-ms',
    '1000',
    // Three groups a /batch-kline request: the six series are two requests, one for each worker.
    '--limit',
    'batch-kline.groups=3',
  ];
  const env = {
    QUOTEFLOW_BASE_URL: sim.url,
    QUOTEFLOW_TOKEN: TOKEN,
    QUOTEFLOW_PLAN: 'premium',
    QUOTEFLOW_LOG_LEVEL: 'info',
  };
  const a = startQuoteflow(args, env);
  const b = startQuoteflow(args, env);
  await waitUntil(
    () => held(a) > 0 && held(b) > 0 && committedToKafka(a) && committedToKafka(b),
    'both workers holding series and committing to Kafka',
    90_000,
  );
  await new Promise((r) => setTimeout(r, Math.random() * 1_500)); // the kill's random moment
  const backfills = (): number => b.stderr().split('"msg":"backfill started"').length - 1;
  const backfillsBefore = backfills();
  a.child.kill('SIGKILL');
  const killedAt = Date.now();
  await waitUntil(() => held(b) === CODES.length, 'the survivor holding every series', 60_000);
  // The survivor starts reading the dead worker's series once it has fenced its transactional id
  // and read the watermarks: within seconds, not after the 60 s transaction timeout that its
  // unfenced open transaction would have held the read for.
  await waitUntil(() => backfills() > backfillsBefore, 'the taken-over series read', 40_000);
  expect(Date.now() - killedAt).toBeLessThan(30_000);
  // Then until the files hold every series' history (committed every second here).
  let filesHold = false;
  await waitUntil(
    () => {
      void readKlineBars(out).then((bars) => {
        filesHold = CODES.every((c) => bars.filter((r) => r.code === c).length >= 100);
      });
      return filesHold;
    },
    'every series in the files',
    60_000,
  );
  b.child.kill('SIGTERM');
  const end = await b.done;
  expect(end.code, end.stderr).toBe(0);
  expect((await a.done).code).toBeNull();

  await expectKafkaAndFilesEachOnce(sim, CODES, { brokers, prefix, out }, 100);
}, 240_000);
