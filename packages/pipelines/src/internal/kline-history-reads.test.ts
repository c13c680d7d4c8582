import { HISTORY_GAP_REASONS } from '@quoteflow/core/internal';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { QuoteflowClient, type Bar } from '@quoteflow/core';
import type { MergeBarsInput } from '@quoteflow/operators';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import type { KlineSyncEvent } from '../kline-sync-options.js';
import { KlineHistoryReads, type FirstRead } from './kline-history-reads.js';
import { KlineSeriesState } from './kline-series-state.js';

const TOKEN = 'pipelines-kline-history-reads-token';
const MIN = 60_000;
let sim: Simulator;
let client: QuoteflowClient;

beforeAll(async () => {
  // Two days of history: 2,880 minute bars and the forming one.
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 29, historyDays: 2 });
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional' });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

/** Reads of N bars into a merger that records only each push's bar starts and size. */
function harness(bars: number) {
  const pushed: { readonly oldest: number; readonly newest: number; readonly bars: number }[] = [];
  const events: KlineSyncEvent[] = [];
  const reads = new KlineHistoryReads({
    client,
    bars,
    graceMs: 15_000,
    signal: new AbortController().signal,
    push: (input: MergeBarsInput) => {
      if (!Array.isArray(input)) return;
      const page = input as readonly Bar[];
      pushed.push({ oldest: page[0]!.tsMs, newest: page.at(-1)!.tsMs, bars: page.length });
    },
    isCurrent: () => true,
    emitEvent: (e) => events.push(e),
    fail: (err) => {
      throw err;
    },
  });
  return { reads, pushed, events };
}

describe('KlineHistoryReads: a fresh first read of several pages', () => {
  it('hands each page to the merger as it arrives, newest first, and keeps only how many bars it read', async () => {
    const h = harness(1_200);
    const first = await h.reads.first(new KlineSeriesState('BTCUSDT', 1), { kind: 'none' });

    // N + 1 bars over three pages; the result is a count, not the bars (a large N would keep every
    // page in memory until the last one came).
    expect(first).toEqual({ got: 1_201, wanted: 1_201 });
    expectTypeOf(h.reads.first.bind(h.reads)).returns.resolves.toEqualTypeOf<FirstRead>();
    expectTypeOf<FirstRead>().toEqualTypeOf<{ readonly got: number; readonly wanted: number }>();
    expect(h.pushed.map((p) => p.bars)).toEqual([500, 500, 201]);
    for (let i = 1; i < h.pushed.length; i++) expect(h.pushed[i]!.newest).toBe(h.pushed[i - 1]!.oldest - MIN);
    expect(h.events).toEqual([]);
  });

  it('says once, in closed bars, how many it got when the service runs out of history between pages', async () => {
    const h = harness(5_000);
    const first = await h.reads.first(new KlineSeriesState('ETHUSDT', 1), { kind: 'none' });
    const total = h.pushed.reduce((n, p) => n + p.bars, 0);
    expect(h.pushed.length).toBeGreaterThan(2);
    expect(first).toEqual({ got: total, wanted: 5_001 });
    // The newest bar read is still forming: one fewer closed bar than read.
    expect(h.events).toEqual([
      expect.objectContaining({
        type: 'gap',
        code: 'ETHUSDT',
        klineType: 1,
        toMs: h.pushed.at(-1)!.oldest,
        reason: `ETHUSDT kline_type 1: ${HISTORY_GAP_REASONS.exhausted}; got ${total - 1} of 5000 closed bars`,
      }),
    ]);
  });
});
