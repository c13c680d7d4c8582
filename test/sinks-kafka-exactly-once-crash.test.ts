/**
 * Exactly once through kill -9, against the real broker: a child process produces K-lines through
 * KafkaKlineSink (exactly once) and is killed with SIGKILL, again and again, at chosen moments:
 * with its records on the broker in an open transaction, right after a commit, or at a random
 * time. Each restart uses the same transactional id (aborting what the dead one left open) and
 * resumes from the sink's own watermarks. Read back with kcat (librdkafka) as a read_committed
 * consumer, every final bar is in the topic exactly once, with the values sent; read uncommitted,
 * the aborted transactions of the killed processes show, so the kills did land mid-transaction.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KAFKA_DRIVERS, type KafkaDriverName } from '@quoteflow/sinks';
import { beforeAll, describe, expect, it } from 'vitest';
import { BARS_T0, BAR_MS, expectedKlineValue } from './support/kafka-kline-bars.js';
import { consumeWithKcat, kafkaBrokers, uniquePrefix, type ReadMessage } from './support/kafka.js';

const CODES = ['AAPL.US', '700.HK', 'BTCUSDT', '600519.SH', 'EURUSD', 'TSLA.US'];
const BARS = 120;
const WORKER = fileURLToPath(new URL('./support/kafka-kline-worker.ts', import.meta.url));

type Moment = 'mid-transaction' | 'after-commit' | 'random';
/** The kills of one run, in order; a last process then runs to the end. */
const KILLS: readonly Moment[] = ['mid-transaction', 'after-commit', 'random', 'mid-transaction', 'random'];

interface WorkerEvent {
  readonly event: 'opened' | 'sent' | 'committed' | 'done';
  readonly round?: number;
}

let brokers: string;
beforeAll(async () => {
  brokers = await kafkaBrokers();
});

/** Runs one worker process; `decide` says, per event, whether it dies there, or kills it later itself. */
function runWorker(
  driver: KafkaDriverName,
  prefix: string,
  decide: (e: WorkerEvent, kill: () => void) => 'kill' | 'go',
): Promise<{ killed: boolean; events: WorkerEvent[] }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', WORKER], {
    env: {
      ...process.env,
      QF_TEST_BROKERS: brokers,
      QF_TEST_DRIVER: driver,
      QF_TEST_PREFIX: prefix,
      QF_TEST_TXN_ID: `${prefix}-worker-1`,
      QF_TEST_CODES: CODES.join(','),
      QF_TEST_BARS: String(BARS),
      QF_TEST_CHUNK: '8',
      QF_TEST_REPLAY: '3',
      QF_TEST_STEP: '1',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: WorkerEvent[] = [];
  let stderr = '';
  let killed = false;
  const kill = (): void => {
    if (killed || child.exitCode !== null) return;
    killed = true;
    child.kill('SIGKILL');
  };
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let buffer = '';
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const e = JSON.parse(buffer.slice(0, nl)) as WorkerEvent;
      buffer = buffer.slice(nl + 1);
      events.push(e);
      if (killed) continue;
      if (decide(e, kill) === 'kill') kill();
      else if (e.event === 'sent' || e.event === 'committed') child.stdin.write('go\n');
    }
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve({ killed, events });
      // A random kill that came as the worker finished: it exited on its own, the run is complete.
      else if (code === 0) resolve({ killed: false, events });
      else reject(new Error(`worker exited with ${code ?? signal}: ${stderr}`));
    });
  });
}

/** Kills the worker at `moment`: at its `nth` 'sent' or 'committed', or `delayMs` after it opened. */
function killAt(moment: Moment, nth: number, delayMs: number): Parameters<typeof runWorker>[2] {
  let seen = 0;
  return (e, kill) => {
    if (moment === 'random') {
      if (e.event === 'opened') setTimeout(kill, delayMs);
      return 'go';
    }
    const at = moment === 'mid-transaction' ? 'sent' : 'committed';
    return e.event === at && ++seen === nth ? 'kill' : 'go';
  };
}

/** Final kline messages per `code@bar index`. */
function finalsByBar(messages: readonly ReadMessage[]): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>();
  for (const m of messages) {
    const v = JSON.parse(m.value) as Record<string, unknown>;
    if (v['final'] !== true) continue;
    expect(m.key).toBe(v['code']);
    const id = `${String(v['code'])}@${(Date.parse(String(v['ts'])) - BARS_T0) / BAR_MS}`;
    out.set(id, [...(out.get(id) ?? []), v]);
  }
  return out;
}

describe.each(KAFKA_DRIVERS)('KafkaKlineSink exactly once through kill -9 (%s)', (driver) => {
  it('has every final bar exactly once in the topic under read_committed, with the values sent', async () => {
    const prefix = uniquePrefix(`eos-crash-${driver}`);
    const kills: string[] = [];
    for (const [n, moment] of KILLS.entries()) {
      const run = await runWorker(driver, prefix, killAt(moment, 1 + (n % 3), 200 + 250 * n));
      // A random kill may come after the worker finished: then the run is simply complete.
      kills.push(`${moment}:${run.killed ? 'killed' : 'finished'}`);
    }
    const last = await runWorker(driver, prefix, () => 'go');
    expect(last.events.at(-1)?.event).toBe('done');

    const committed = await consumeWithKcat(brokers, `${prefix}.kline`, 60_000, 'read_committed');
    const byBar = finalsByBar(committed);
    const expected = CODES.flatMap((code) => Array.from({ length: BARS }, (_, i) => `${code}@${i}`));
    expect([...byBar.keys()].sort()).toEqual([...expected].sort());
    const repeated = [...byBar].filter(([, values]) => values.length !== 1).map(([id]) => id);
    expect(repeated, `bars not exactly once after ${kills.join(', ')}`).toEqual([]);
    for (const [id, [value]] of byBar) {
      const [code, i] = id.split('@') as [string, string];
      expect(value, id).toEqual(expectedKlineValue(code, Number(i)));
    }
    // The killed processes did leave records in transactions that were then aborted.
    const everything = await consumeWithKcat(brokers, `${prefix}.kline`, 60_000, 'read_uncommitted');
    expect(kills.filter((k) => k.startsWith('mid-transaction:killed'))).toHaveLength(2);
    expect([...finalsByBar(everything).values()].some((v) => v.length > 1)).toBe(true);

    const marks = await consumeWithKcat(brokers, `${prefix}.kline.watermarks`, 60_000, 'read_committed');
    const newest = new Map(marks.map((m) => [m.key, JSON.parse(m.value) as Record<string, unknown>]));
    for (const code of CODES) {
      expect(newest.get(`${code}|1`), code).toMatchObject({
        first: BARS_T0,
        last: BARS_T0 + (BARS - 1) * BAR_MS,
        rows: BARS,
        transactional_id: `${prefix}-worker-1`,
      });
    }
  }, 240_000);
});
