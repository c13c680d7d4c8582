/**
 * `quoteflow sync` into files and a real Kafka broker (exactly once, its default), killed with
 * SIGKILL twice at random moments and restarted: read back by kcat with
 * `isolation.level=read_committed` (a client quoteflow did not write), every final bar of every
 * series from the first to the newest closed is in the topic exactly once with the service's
 * values, and the files hold the same bars once each. The built binary against the simulator's
 * strict enforcement (real clock, real sockets).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { expectKafkaAndFilesEachOnce } from './support/exactly-once-check.js';
import { kafkaBrokers, uniquePrefix, waitUntil } from './support/kafka.js';
import { startQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'sync-kafka-crash-token-3b9d';
const CODES = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'];
let sim: Simulator;
let work: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 23 });
  work = await mkdtemp(join(tmpdir(), 'qf-sync-kafka-crash-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_LOG_LEVEL: 'info',
});

it('kill -9 twice at random moments into Kafka and files: read_committed sees every final bar once, the files too', async () => {
  const brokers = await kafkaBrokers();
  const prefix = uniquePrefix('sync-crash');
  const out = join(work, 'out');
  const args = [
    'sync',
    '--codes',
    CODES.join(','),
    '--kline-types',
    '1',
    '--bars',
    '200',
    '--out',
    out,
    '--kafka',
    brokers,
    '--topic-prefix',
    prefix,
  ];
  // The first run commits Kafka every second and the files every 30 s (the default): killed in
  // between, Kafka is ahead of the files, and the restart must resume each from its own watermarks.
  // The second commits the files every 300 ms too, so the kill may land in either commit.
  for (const checkpointMs of ['30000', '300']) {
    const run = startQuoteflow([...args, '--checkpoint-ms', checkpointMs], env());
    let ended = false;
    void run.done.then(() => (ended = true));
    // Once Kafka committed something, at a random moment after.
    await waitUntil(
      () => /"sink":"kafka[^"]*","files":0,"committed":[1-9]/.test(run.stderr()) || ended,
      'a first Kafka checkpoint',
      60_000,
    );
    expect(ended, run.stderr()).toBe(false);
    await new Promise((r) => setTimeout(r, Math.random() * 2_500)); // the kill's random moment
    run.child.kill('SIGKILL');
    const killed = await run.done;
    expect(killed.code, killed.stderr).toBeNull();
  }
  const last = startQuoteflow([...args, '--checkpoint-ms', '300', '--duration', '5'], env());
  const end = await last.done;
  expect(end.code, end.stderr).toBe(0);
  expect(end.stderr).not.toContain('at least once');

  await expectKafkaAndFilesEachOnce(sim, CODES, { brokers, prefix, out }, 200);
}, 180_000);
