import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QuoteflowClient, acceleratedClock } from '@quoteflow/core';
import { startSimulator } from '@quoteflow/simulator';
import { klineSync } from './kline-sync.js';
import type { KlineSyncEvent } from './kline-sync-options.js';
import { readSeriesStarts } from './read-kline-bars.js';

const TOKEN = 'pipelines-kline-sync-calendar-token';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('klineSync when the service trades on a day the calendar calls a holiday (issue 28 item 3)', () => {
  it("writes a stock's newest bar on the weekend after it (all N closed bars), and warns once", async () => {
    // Saturday after Good Friday 2026-04-03, which the calendar closes and this service trades.
    const clock = acceleratedClock({ speed: 30, startMs: Date.parse('2026-04-04T14:00:00Z') });
    const sim = await startSimulator({
      port: 0,
      tokens: { [TOKEN]: 'professional' },
      clock,
      holidayTrading: { us: ['2026-04-03'] },
    });
    const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
    const dir = await mkdtemp(join(tmpdir(), 'qf-kline-sync-calendar-'));
    cleanups.push(
      () => client.close(),
      () => sim.close(),
      () => rm(dir, { recursive: true, force: true }),
    );
    const events: KlineSyncEvent[] = [];
    await klineSync({
      client,
      codes: ['AAPL.US'],
      klineTypes: [1],
      bars: 100,
      files: { dir, format: 'ndjson' },
      live: false,
      onEvent: (e) => events.push(e),
    }).done;
    const market = sim.market.bars('AAPL.US', 1, sim.marketNow(), 100).map((b) => b.startMs);
    expect(new Date(market.at(-1)!).toISOString().slice(0, 10)).toBe('2026-04-03');
    const held = [...(await readSeriesStarts(dir)).values()][0]!.starts;
    // The 100 most recent closed bars: Good Friday's last one included (it waited for Monday's close).
    expect(held).toEqual(market);
    const warnings = events.filter((e) => e.type === 'warning' && e.message.includes('2026-04-03'));
    expect(warnings).toHaveLength(1);
  });
});
