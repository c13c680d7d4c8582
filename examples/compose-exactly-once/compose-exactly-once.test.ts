/**
 * The README's composition, run as the program it is (`tsx src/main.ts`, a child process), killed
 * with SIGKILL twice at random moments after Kafka committed, then run to a clean stop: kcat
 * (`isolation.level=read_committed`) reads every final bar once, and the files hold them once each.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readKlineBars } from '@quoteflow/pipelines';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { expectEachOnceWithMarketValues, finalBarsOf } from '../../test/support/exactly-once-check.js';
import { consumeWithKcat, kafkaBrokers, uniquePrefix, waitUntil } from '../../test/support/kafka.js';

const TOKEN = 'example-compose-token';
const CODES = ['BTCUSDT', 'ETHUSDT'];
let sim: Simulator;
let out: string;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 31 });
  out = await mkdtemp(join(tmpdir(), 'qf-example-compose-'));
});
afterAll(async () => {
  await sim.close();
  await rm(out, { recursive: true, force: true });
});

/** The example as a program: its stderr so far, and its end. */
function startExample(env: Record<string, string>) {
  // tsx as a loader in the program's own process (its CLI runs the program in a child process,
  // which a SIGKILL of the CLI would leave running).
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: import.meta.dirname,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; stderr: string }>((res) =>
    child.on('close', (code) => res({ code, stderr })),
  );
  return { child, stderr: () => stderr, done };
}

it('killed twice at random moments and run to a stop, every final bar once in Kafka (read_committed) and in the files', async () => {
  const brokers = await kafkaBrokers();
  const prefix = uniquePrefix('example-compose');
  const env = {
    QUOTEFLOW_BASE_URL: sim.url,
    QUOTEFLOW_TOKEN: TOKEN,
    QUOTEFLOW_PLAN: 'professional',
    KAFKA_BROKERS: brokers,
    TOPIC_PREFIX: prefix,
    OUT: out,
    CODES: CODES.join(','),
    BARS: '150',
  };
  for (let kill = 0; kill < 2; kill++) {
    const run = startExample(env);
    let ended = false;
    void run.done.then(() => (ended = true));
    await waitUntil(
      () => /kafka [^:]+: [1-9]\d* closed bars committed/.test(run.stderr()) || ended,
      'a Kafka commit',
      60_000,
    );
    expect(ended, run.stderr()).toBe(false);
    await new Promise((r) => setTimeout(r, Math.random() * 2_000)); // the kill's random moment
    run.child.kill('SIGKILL');
    expect((await run.done).code).toBeNull();
  }
  const last = await startExample({ ...env, DURATION_MS: '4000' }).done;
  expect(last.code, last.stderr).toBe(0);
  const records = await consumeWithKcat(brokers, `${prefix}.kline`, 30_000, 'read_committed');
  expectEachOnceWithMarketValues(sim, CODES, 'kafka', finalBarsOf(records), 150);
  const files = (await readKlineBars(out)).map((b) => ({
    code: b.code,
    tsMs: b.tsMs,
    values: [b.open, b.high, b.low, b.close],
  }));
  expectEachOnceWithMarketValues(sim, CODES, 'files', files, 150);
  expect(sim.log.refused()).toEqual([]);
}, 150_000);
