/**
 * The README's composition of public pieces, `klineUpdates` into `commitTo` with the dataset sink
 * and a transactional Kafka topic (an in-memory model of Kafka's semantics), crashed at random
 * moments (every sink dies at once, as on kill -9: an open transaction and staged files are lost)
 * and restarted from the sinks' own watermarks: each sink holds every closed bar from its first to
 * its newest exactly once, with the service's final values (the simulator's market is the oracle).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { takeUntil, timer } from 'rxjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock, QuoteflowClient, type Clock } from '@quoteflow/core';
import { klineUpdates, readKlineBars } from '@quoteflow/pipelines';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { commitTo, DatasetSink } from '@quoteflow/sinks';
import {
  CrashableSink,
  ModelKafkaSink,
  TransactionalTopicModel,
} from './support/transactional-topic-model.js';

const TOKEN = 'compose-crash-token-7d1e';
const CODES = ['BTCUSDT', 'ETHUSDT'];
const MIN = 60_000;
let sim: Simulator;
let clock: Clock;
let work: string;

beforeAll(async () => {
  // Market time at 120x for the simulator and the pipeline alike: a 1-minute bar closes every 0.5 s.
  clock = acceleratedClock({ speed: 120 });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 17, clock });
  work = await mkdtemp(join(tmpdir(), 'qf-compose-crash-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

/** One run of the composition until `stopAfterMs` (a clean stop) or a crash at `crashAfterMs`. */
async function runOnce(
  dir: string,
  topic: TransactionalTopicModel,
  end: { readonly crashAfterMs: number } | { readonly stopAfterMs: number },
): Promise<void> {
  const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
  const files = new CrashableSink(await DatasetSink.open({ dir, clock, checkpointEveryMs: 3_000 * 120 }));
  const kafka = new ModelKafkaSink(topic, 500 * 120);
  const sinks = [files, kafka];
  const updates$ = klineUpdates(client, {
    codes: CODES,
    klineTypes: [1],
    bars: 40,
    resumeFrom: sinks,
    clock,
  });
  try {
    if ('stopAfterMs' in end) {
      // A clean stop: the source completes, every sink commits what it took.
      await new Promise<void>((resolve, reject) =>
        updates$
          .pipe(takeUntil(timer(end.stopAfterMs)), commitTo(sinks, { clock }))
          .subscribe({ error: reject, complete: resolve }),
      );
    } else {
      const sub = updates$.pipe(commitTo(sinks, { clock })).subscribe({ error: () => undefined });
      await new Promise((r) => setTimeout(r, end.crashAfterMs)); // the kill's random moment
      files.crash();
      kafka.crash();
      sub.unsubscribe();
    }
  } finally {
    await Promise.all(sinks.map((s) => s.close()));
    await client.close();
  }
}

/** The market's closed 1-minute bars of `code`, by start. */
function marketBars(code: string): Map<number, { open: number; high: number; low: number; close: number }> {
  const decimals = sim.market.product(code)!.priceDecimals;
  const wire = (v: number): number => Number(v.toFixed(decimals));
  return new Map(
    sim.market
      .bars(code, 1, sim.marketNow(), 2_000)
      .filter((b) => !b.forming)
      .map((b) => [
        b.startMs,
        { open: wire(b.open), high: wire(b.high), low: wire(b.low), close: wire(b.close) },
      ]),
  );
}

/** Each code's bars in a sink: each once, consecutive from the first to the newest, the market's values. */
function expectExactlyOnce(
  sink: string,
  bars: readonly { code: string; tsMs: number; open: number; high: number; low: number; close: number }[],
): void {
  for (const code of CODES) {
    const market = marketBars(code);
    const mine = bars.filter((b) => b.code === code).sort((a, b) => a.tsMs - b.tsMs);
    expect(mine.length, `${sink} ${code}: at least the first run's bars`).toBeGreaterThanOrEqual(40);
    for (let i = 0; i < mine.length; i++) {
      const b = mine[i]!;
      if (i > 0) expect(b.tsMs - mine[i - 1]!.tsMs, `${sink} ${code}: a bar twice or a gap`).toBe(MIN);
      expect([b.open, b.high, b.low, b.close], `${sink} ${code} ${b.tsMs}: final values`).toEqual(
        Object.values(market.get(b.tsMs) ?? {}),
      );
    }
  }
}

it('crashed at random moments and restarted, files and Kafka each hold every closed bar exactly once', async () => {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 150, max: 1_800 }), { minLength: 1, maxLength: 3 }),
      async (crashes) => {
        const dir = join(work, `round-${round++}`);
        const topic = new TransactionalTopicModel();
        for (const crashAfterMs of crashes) await runOnce(dir, topic, { crashAfterMs });
        await runOnce(dir, topic, { stopAfterMs: 1_500 });
        expectExactlyOnce('files', await readKlineBars(dir));
        expectExactlyOnce(
          'kafka',
          topic.committed.filter((u) => u.final),
        );
      },
    ),
    { numRuns: 4 },
  );
  expect(sim.log.refused()).toEqual([]);
}, 120_000);
