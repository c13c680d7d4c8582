import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { QuoteflowClient, acceleratedClock } from '@quoteflow/core';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { klineSync } from './kline-sync.js';
import type { KlineSyncEvent } from './kline-sync-options.js';

const TOKEN = 'pipelines-kline-sync-holes-token';
let sim: Simulator;
let client: QuoteflowClient;
let dir: string;

beforeEach(async () => {
  // Market time at 300x for both: a poll a real second is five market minutes, so each answer's
  // latest two bars leave three out and the merger waits for them (a hole it reports).
  const clock = acceleratedClock({ speed: 300, startMs: Date.now() - 86_400_000 });
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 5, clock });
  client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
  dir = await mkdtemp(join(tmpdir(), 'qf-kline-sync-holes-'));
});
afterEach(async () => {
  await client.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

async function barStarts(code: string): Promise<number[]> {
  const out: number[] = [];
  for (const e of await readdir(join(dir, 'kline'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.ndjson')) continue; // not the Delta log
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n'))
      if (line.trim() !== '') {
        const row = JSON.parse(line) as { code: string; ts: string };
        if (row.code === code) out.push(Date.parse(row.ts));
      }
  }
  return out.sort((a, b) => a - b);
}

it('a hole the re-read fills is awaited, not reported as a gap; the bars land once, in order', async () => {
  const events: KlineSyncEvent[] = [];
  const stop = new AbortController();
  const run = klineSync({
    client,
    codes: ['BTCUSDT'],
    klineTypes: [1],
    bars: 5,
    files: { dir, format: 'ndjson' },
    live: true,
    // Periods are on the clock: five market minutes, one real second.
    refreshPeriodMs: 300_000,
    checkpointMs: 300_000,
    signal: stop.signal,
    onEvent: (e) => events.push(e),
  });
  const awaited = () => events.filter((e) => e.type === 'bars-awaited');
  await vi.waitFor(() => expect(awaited().length).toBeGreaterThanOrEqual(3), {
    timeout: 30_000,
    interval: 50,
  });
  stop.abort();
  await run.done;
  expect(events.filter((e) => e.type === 'gap')).toEqual([]);
  const starts = await barStarts('BTCUSDT');
  expect(new Set(starts).size).toBe(starts.length);
  for (let i = 1; i < starts.length; i++)
    expect(starts[i]! - starts[i - 1]!, `after ${starts[i - 1]}`).toBe(60_000);
  // Holes inside what the files hold, so their awaited bars landed (the last may still have been
  // read again when the run stopped: its bars are the next run's).
  const inside = awaited().filter(
    (e) => e.type === 'bars-awaited' && e.fromMs >= starts[0]! && e.toMs <= starts.at(-1)!,
  );
  expect(inside.length).toBeGreaterThanOrEqual(1);
}, 60_000);
