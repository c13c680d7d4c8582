import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuoteflowClient, acceleratedClock, type Clock } from '@quoteflow/core';
import { startSimulator, type SimHalt, type Simulator } from '@quoteflow/simulator';
import { klineSync } from './kline-sync.js';
import type { KlineSyncEvent, KlineSyncOptions } from './kline-sync-options.js';

const TOKEN = 'pipelines-kline-sync-halts-token';
// Tuesday 13:00 in New York, market open; AAPL halted from 12:00 to 12:30 there (on the New York exchange).
const START_MS = Date.parse('2026-11-17T18:00:00Z');
const HALT: SimHalt = {
  code: 'AAPL.US',
  fromMs: Date.parse('2026-11-17T17:00:00Z'),
  toMs: Date.parse('2026-11-17T17:30:00Z'),
};
let clock: Clock;
let sim: Simulator;
let client: QuoteflowClient;
let dir: string;

beforeEach(async () => {
  // One clock for the simulator and the sync, at 30x: a minute of it is two real seconds.
  clock = acceleratedClock({ speed: 30, startMs: START_MS });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, clock, halts: [HALT] });
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
  dir = await mkdtemp(join(tmpdir(), 'qf-kline-sync-halts-'));
});
afterEach(async () => {
  await client.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/** A sync of 1-minute bars reaching back over the halt; returns its events. */
async function sync(over: Partial<KlineSyncOptions>): Promise<KlineSyncEvent[]> {
  const events: KlineSyncEvent[] = [];
  const handle = klineSync({
    client,
    codes: ['AAPL.US'],
    klineTypes: [1],
    bars: 100,
    live: false,
    files: { dir },
    onEvent: (e) => events.push(e),
    ...over,
  });
  await handle.done;
  return events;
}

const klineReads = (): number => sim.log.entries().filter((e) => e.endpoint === 'kline').length;
const suspensionQueries = () => sim.log.entries().filter((e) => e.endpoint === 'suspension');

describe('klineSync with the service’s halts', () => {
  it('reports no gap and reads nothing again for bars a halt the service reports explains', async () => {
    const events = await sync({ serviceHalts: true });
    expect(events.filter((e) => e.type === 'gap')).toEqual([]);
    expect(klineReads()).toBe(1);
    // Asked before the history was read, so before its first bar was judged.
    const first = sim.log.entries()[0];
    expect([first?.endpoint, first?.family]).toEqual(['suspension', 'nyse']);
  });

  it('reports the hole as a gap and reads it again without serviceHalts (off by default)', async () => {
    const events = await sync({});
    expect(events).toContainEqual(expect.objectContaining({ type: 'gap', code: 'AAPL.US' }));
    expect(klineReads()).toBeGreaterThan(1);
    expect(suspensionQueries()).toEqual([]);
  });

  it('asks each exchange at most once a minute while it runs, through the token’s one query a minute', async () => {
    const controller = new AbortController();
    await sync({
      serviceHalts: true,
      live: true,
      signal: controller.signal,
      // Stop after two and a half minutes of the clock (five real seconds): two rounds begun.
      onEvent: (e) => {
        if (e.type === 'live-cycle' && clock.now() - START_MS > 150_000) controller.abort();
      },
    });
    const asked = suspensionQueries();
    expect(new Set(asked.map((e) => e.family))).toEqual(new Set(['nyse', 'nasdaq']));
    expect(asked.filter((e) => e.refusedBy !== undefined)).toEqual([]);
    for (const exchange of ['nyse', 'nasdaq']) {
      const times = asked.filter((e) => e.family === exchange).map((e) => e.arrivalMs);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(60_000);
    }
    // And asked again: the second round had begun.
    expect(asked.filter((e) => e.family === 'nyse').length).toBeGreaterThanOrEqual(2);
  }, 20_000);

  it('makes no suspension request when no code is a Shanghai or US stock', async () => {
    await sync({ serviceHalts: true, codes: ['BTCUSDT', '700.HK'], bars: 5 });
    expect(suspensionQueries()).toEqual([]);
    expect(klineReads()).toBeGreaterThan(0);
  });

  it('warns once and keeps syncing when the suspension query fails', async () => {
    sim.addFault({ kind: 'http-5xx', endpoint: 'suspension', times: 1 });
    const events = await sync({ serviceHalts: true });
    expect(events.filter((e) => e.type === 'warning' && e.message.includes('suspension'))).toHaveLength(1);
    expect(events).toContainEqual(expect.objectContaining({ type: 'backfill-series-done', code: 'AAPL.US' }));
  });
});
