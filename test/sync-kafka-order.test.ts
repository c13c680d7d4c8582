/**
 * Issue 33 item 4: one product's records in time order on its partition. `quoteflow sync` into files
 * and a real Kafka broker, with a backfill of several pages (newest page first), stopped in its
 * middle and restarted: read back by kcat `read_committed`, each key's records of each run are in
 * time order (finals strictly ascending, no forming update ahead of an older final), and every
 * final bar is in the topic exactly once across both runs, the files too. The built binary against
 * the simulator's strict enforcement (real clock, real sockets). And live polls that skip bars:
 * while the merger waits for the bars missing before a newer one, no update of the newer one
 * reaches the topic ahead of them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock } from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { expectKafkaAndFilesEachOnce, finalBarsOf } from './support/exactly-once-check.js';
import { consumeWithKcat, kafkaBrokers, uniquePrefix, waitUntil, type ReadMessage } from './support/kafka.js';
import { startQuoteflow } from './support/quoteflow-process.js';

const TOKEN = 'sync-kafka-order-token-5e2a';
const CODES = ['BTCUSDT', 'ETHUSDT'];
const BARS = 1_200; // three pages of 500 per series, read newest first
let sim: Simulator;
let work: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 41 });
  work = await mkdtemp(join(tmpdir(), 'qf-sync-kafka-order-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  QUOTEFLOW_STATE_DIR: join(work, 'state'),
  QUOTEFLOW_LOG_LEVEL: 'info',
  QUOTEFLOW_LOG_FORMAT: 'json',
});

/** One record as the order check sees it: its key, start, and whether it is final. */
interface Seen {
  readonly key: string;
  readonly tsMs: number;
  readonly final: boolean;
  readonly at: string;
}

function seenOf(records: readonly ReadMessage[]): Seen[] {
  return records.map((r) => {
    const v = JSON.parse(r.value) as { ts: string; final: boolean };
    return { key: r.key, tsMs: Date.parse(v.ts), final: v.final, at: `${r.partition}@${r.offset}` };
  });
}

/**
 * Per key, in topic order: each final newer than every record before it of the key (finals
 * strictly ascending), each forming update no older than the finals before it.
 */
function expectTimeOrderPerKey(run: string, records: readonly ReadMessage[]): void {
  const newest = new Map<string, { final: number; any: number }>();
  for (const r of seenOf(records)) {
    const before = newest.get(r.key) ?? { final: -Infinity, any: -Infinity };
    const when = new Date(r.tsMs).toISOString();
    if (r.final) {
      expect(r.tsMs, `${run}: ${r.key} final ${when} at ${r.at} after a newer record`).toBeGreaterThanOrEqual(
        before.any,
      );
      expect(r.tsMs, `${run}: ${r.key} final ${when} at ${r.at} twice`).toBeGreaterThan(before.final);
    } else
      expect(r.tsMs, `${run}: ${r.key} forming ${when} at ${r.at} older than a final`).toBeGreaterThanOrEqual(
        before.final,
      );
    newest.set(r.key, {
      final: r.final ? r.tsMs : before.final,
      any: Math.max(before.any, r.tsMs),
    });
  }
}

/** `quoteflow sync` of the codes' 1-minute bars into `out` and Kafka. */
function syncArgs(bars: number, out: string, brokers: string, prefix: string): string[] {
  const series = ['--codes', CODES.join(','), '--kline-types', '1', '--bars', String(bars)];
  return ['sync', ...series, '--out', out, '--kafka', brokers, '--topic-prefix', prefix];
}

it('a backfill of several pages, stopped in its middle and restarted: each key in time order per run, every final bar once', async () => {
  const brokers = await kafkaBrokers();
  const prefix = uniquePrefix('sync-order');
  const topic = `${prefix}.kline`;
  const out = join(work, 'out');
  const args = syncArgs(BARS, out, brokers, prefix);

  // One page every 2 s: stopped (SIGINT) once four pages came, each series is one or two pages
  // short of its 1,200 bars.
  const since = Date.now();
  const pages = (): number =>
    sim.log.count((e) => e.endpoint === 'kline' && e.arrivalMs >= since && e.done && e.status === 200);
  const first = startQuoteflow([...args, '--limit', 'kline-rate=1/2s'], env());
  let ended = false;
  void first.done.then(() => (ended = true));
  await waitUntil(() => pages() >= 4 || ended, 'four pages of history', 60_000);
  expect(ended, first.stderr()).toBe(false);
  first.child.kill('SIGINT');
  const stopped = await first.done;
  expect(stopped.code, stopped.stderr).toBe(0);
  expect(stopped.stderr).toMatch(/(BTCUSDT|ETHUSDT):1 holds \d+ of 1200/);

  const firstRun = await consumeWithKcat(brokers, topic, 30_000, 'read_committed');
  expectTimeOrderPerKey('first run', firstRun);
  const firstFinals = finalBarsOf(firstRun);
  // The pages read before the stop reached Kafka (oldest first), short of the 1,200 bars.
  expect(firstFinals.length).toBeGreaterThanOrEqual(500);
  expect(CODES.some((c) => firstFinals.filter((b) => b.code === c).length < BARS)).toBe(true);

  // The restart reads the older rest, then what closed since; stopped once its backfill is done.
  const second = startQuoteflow(args, env());
  await waitUntil(() => second.stderr().includes('"msg":"backfill done"'), 'the backfill', 60_000);
  second.child.kill('SIGINT');
  const end = await second.done;
  expect(end.code, end.stderr).toBe(0);
  const all = await consumeWithKcat(brokers, topic, 30_000, 'read_committed');
  const seenBefore = new Set(firstRun.map((r) => `${r.partition}@${r.offset}`));
  expectTimeOrderPerKey(
    'second run',
    all.filter((r) => !seenBefore.has(`${r.partition}@${r.offset}`)),
  );
  await expectKafkaAndFilesEachOnce(sim, CODES, { brokers, prefix, out }, BARS);
}, 180_000);

it('live polls that skip bars: no update of a key ahead of the bars missing before it, and every bar final once', async () => {
  // The market runs 300 times real speed from two days ago: between two polls (one a second, the
  // plan's /batch-kline interval) 5 minutes pass, so each answer's latest 2 bars leave 3 out and
  // the merger waits for them (read again from /kline: a debug line with -v, and no missing-bars
  // warning, since the re-read finds them). From the CLI's clock those bars are long closed, so each
  // one is final once read: the holes are what this run is about.
  const past = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional' },
    seed: 43,
    clock: acceleratedClock({ speed: 300, startMs: Date.now() - 2 * 86_400_000 }),
  });
  try {
    const brokers = await kafkaBrokers();
    const prefix = uniquePrefix('sync-order-holes');
    const run = startQuoteflow([...syncArgs(20, join(work, 'holes'), brokers, prefix), '-v'], {
      ...env(),
      QUOTEFLOW_BASE_URL: past.url,
      QUOTEFLOW_STATE_DIR: join(work, 'holes-state'),
    });
    let ended = false;
    void run.done.then(() => (ended = true));
    // Each code's holes (one line per hole) on stderr.
    const lines = (msg: string, code: string): number =>
      run
        .stderr()
        .split('\n')
        .filter((l) => l.includes(`"msg":"${msg}"`) && l.includes(`"code":"${code}"`)).length;
    const holes = (code: string): number => lines('bars awaited: reading history again', code);
    await waitUntil(() => CODES.every((c) => holes(c) >= 3) || ended, 'bars missing between polls', 90_000);
    expect(ended, run.stderr()).toBe(false);
    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    // The re-reads found every bar: no hole was a missing-bars warning.
    for (const code of CODES) expect(lines('missing-bars', code), code).toBe(0);

    const records = await consumeWithKcat(brokers, `${prefix}.kline`, 30_000, 'read_committed');
    expectTimeOrderPerKey('polls with holes', records);
    for (const code of CODES) {
      const finals = finalBarsOf(records).filter((b) => b.code === code);
      // The holes were filled: one final a minute, from the backfill's first past a hole to the newest.
      expect(finals.length, code).toBeGreaterThan(20 + 3);
      for (let i = 1; i < finals.length; i++)
        expect(finals[i]!.tsMs - finals[i - 1]!.tsMs, `${code} after ${finals[i - 1]!.tsMs}`).toBe(60_000);
    }
  } finally {
    await past.close();
  }
}, 180_000);
