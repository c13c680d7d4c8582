/**
 * A week of live sync in simulated time (one clock for the simulator and the sync, 7,200 times
 * real speed; at 14,400 a loaded CI box once polled the Hong Kong hour before lunch too late, a
 * real hole; the clock stands still while the process is starved of CPU, test/support/steady-clock.ts,
 * so a loaded machine slows the week down instead of making its polls miss bars): every product class of the simulator's catalogue, 1-hour and daily bars, across
 * Thanksgiving (New York closed, then a half day), the Hong Kong and A-share lunch breaks, a weekend
 * and the forex weekly pause. No gap is reported, and close-aware polling asks for no stock while
 * its market is closed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { calendarOf, QuoteflowClient, type BatchKlineGroup } from '@quoteflow/core';
import { mayTradeAt } from '@quoteflow/core/internal';
import { klineSync, type KlineSyncEvent } from '@quoteflow/pipelines';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { steadyClock, type SteadyClock } from './support/steady-clock.js';

const TOKEN = 'calendar-week-token';
const SPEED = 7_200;
/** While the backfill of every code is read (seconds of real time under load): a minute a second. */
const BACKFILL_SPEED = 60;
// From Sunday 16:00 UTC, hours before the first market opens (forex at 22:00, Hong Kong at 01:30),
// until Monday 00:00 a week on, past the forex week's reopening.
const START = Date.parse('2026-11-22T16:00:00Z');
const END = Date.parse('2026-11-30T00:00:00Z');
let sim: Simulator;
let clock: SteadyClock;

beforeAll(async () => {
  clock = steadyClock({ speed: BACKFILL_SPEED, startMs: START });
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'professional' },
    seed: 21,
    clock,
    historyDays: 20,
  });
});
afterAll(async () => {
  await sim.close();
  clock.close();
});

it('syncs a week of every class without a false gap, and polls no stock while its market is closed', async () => {
  const codes = sim.market.products().map((p) => p.code);
  const client = new QuoteflowClient({ baseUrl: sim.url, token: TOKEN, plan: 'professional', clock });
  const asked: { atMs: number; groups: readonly BatchKlineGroup[] }[] = [];
  const batchKline = client.batchKline.bind(client);
  client.batchKline = ((groups: readonly BatchKlineGroup[], options) => {
    asked.push({ atMs: clock.now(), groups });
    return batchKline(groups, options);
  }) as typeof client.batchKline;
  const events: KlineSyncEvent[] = [];
  const finals = new Map<string, number>();
  const sync = klineSync({
    client,
    codes,
    klineTypes: [5, 8],
    bars: 3,
    clock,
    checkpointMs: 3_600_000,
    // At 7,200x a minute of the clock is 8 ms: the suspension rounds (a year of records per answer,
    // each exchange once a minute while its market trades) would be the run's main load, and the
    // calendar's gaps are under test here, not halts (those: pipelines' kline-sync-halts.test.ts).
    serviceHalts: false,
    // A poll every 2 minutes of the clock (17 ms real): every hour's close seen within minutes,
    // every market's open, lunch and close crossed as before (close-aware: the planner still picks
    // the open markets). At the plan's pace (1.1 s of the clock, 0.16 ms real) the polls came as
    // fast as the machine answered them, so the week's CPU was set by the round trips, not by the
    // calendar under test, and the cadence in market time by the machine's load.
    refreshPeriodMs: 120_000,
    onEvent: (e) => {
      events.push(e);
      // The week runs at full speed once every code is current: no session rolls over a code
      // between its backfill and its first poll, however long a loaded machine takes to read them.
      if (e.type === 'backfill-done') clock.setSpeed(SPEED);
    },
    onUpdate: (u) => {
      if (u.final) finals.set(u.code, (finals.get(u.code) ?? 0) + 1);
    },
  });
  await new Promise<void>((resolve) => clock.setTimeout(resolve, END - clock.now()));
  const summary = await sync.stop();
  await client.close();
  console.log(
    `calendar week: the clock stood still ${clock.stalledMs.toFixed(0)} ms while the process was starved`,
  );

  expect(events.filter((e) => e.type === 'gap')).toEqual([]);
  expect(sim.log.refused()).toEqual([]);
  // Every code got its week's closed bars (daily ones at least), every class.
  for (const code of codes) expect(finals.get(code) ?? 0, code).toBeGreaterThanOrEqual(5);
  expect(summary.closedBars).toBeGreaterThan(codes.length * 5);
  // No stock group asked for while its market could not trade, except the one read after a close.
  const stockAsksWhileClosed = asked.flatMap(({ atMs, groups }) =>
    groups.filter((g) => {
      const calendar = calendarOf(g.code);
      return (
        calendar.segments.length > 0 && !mayTradeAt(calendar, atMs) && !mayTradeAt(calendar, atMs - 3_600_000)
      );
    }),
  );
  expect(stockAsksWhileClosed.map((g) => g.code)).toEqual([]);
}, 240_000);
