/**
 * Issue 33 item 4: one product's records in time order on its partition. `quoteflow sync` into files
 * and a real Kafka broker, with a backfill of several pages (newest page first), stopped in its
 * middle and restarted: read back by kcat `read_committed`, each key's records of each run are in
 * time order (finals strictly ascending, no forming update ahead of an older final), and every
 * final bar is in the topic exactly once across both runs, the files too. The built binary against
 * the simulator's strict enforcement (real clock, real sockets).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
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

it('a backfill of several pages, stopped in its middle and restarted: each key in time order per run, every final bar once', async () => {
  const brokers = await kafkaBrokers();
  const prefix = uniquePrefix('sync-order');
  const topic = `${prefix}.kline`;
  const out = join(work, 'out');
  const args = [
    'sync',
    '--codes',
    CODES.join(','),
    '--kline-types',
    '1',
    '--bars',
    String(BARS),
    '--out',
    out,
    '--kafka',
    brokers,
    '--topic-prefix',
    prefix,
  ];

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
