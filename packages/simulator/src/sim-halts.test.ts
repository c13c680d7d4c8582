import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from './start-simulator.js';

// Tuesday 13:00 in New York: the halt below (12:00 to 12:30 there) has ended, a later one has not.
const NOW = Date.parse('2026-11-17T18:00:00Z');
const FROM = Date.parse('2026-11-17T17:00:00Z');
const TO = Date.parse('2026-11-17T17:30:00Z');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    clock: { now: () => NOW },
    // Two suspension queries in one minute: the per-token limit is not under test here.
    rateLimits: false,
    halts: [
      { code: 'AAPL.US', fromMs: FROM, toMs: TO },
      { code: 'TSLA.US', exchange: 'nasdaq', fromMs: NOW - 60_000, toMs: NOW + 600_000 },
    ],
  });
});
afterAll(() => sim.close());

const get = async (path: string, query?: unknown): Promise<Record<string, unknown>> => {
  const q = query === undefined ? '' : `&query=${encodeURIComponent(JSON.stringify(query))}`;
  return (await (await fetch(`${sim.url}${path}?token=demo${q}`)).json()) as Record<string, unknown>;
};

describe('startSimulator halts', () => {
  it('lists a halt in the suspension records of its exchange, resumed or not yet', async () => {
    const nyse = (await get('/api/suspension/nyse'))['data'] as Record<string, string | null>[];
    expect(nyse).toContainEqual(
      expect.objectContaining({
        symbol: 'AAPL',
        haltDateTime: '2026-11-17 12:00:00',
        resumeDateTime: '2026-11-17 12:30:00',
      }),
    );
    const nasdaq = (await get('/api/suspension/nasdaq'))['data'] as Record<string, string | null>[];
    const tsla = nasdaq.find((r) => r.symbol === 'TSLA' && r.haltDateTime === '2026-11-17 12:59:00');
    expect(tsla?.resumeDateTime).toBeNull();
    expect(nyse.some((r) => r.symbol === 'TSLA' && r.haltDateTime === '2026-11-17 12:59:00')).toBe(false);
  });

  it('leaves the halted bars out of K-line answers, reaching back further for as many', async () => {
    const data = (
      await get('/quote-stock-b-api/kline', {
        trace: 't',
        data: {
          code: 'AAPL.US',
          kline_type: 1,
          kline_timestamp_end: 0,
          query_kline_num: 120,
          adjust_type: 0,
        },
      })
    )['data'] as { kline_list: { timestamp: string }[] };
    const starts = data.kline_list.map((b) => Number(b.timestamp) * 1000);
    expect(starts.some((t) => t < FROM)).toBe(true);
    expect(starts.some((t) => t >= TO)).toBe(true);
    expect(starts.filter((t) => t >= FROM && t < TO)).toEqual([]);
    expect(starts).toHaveLength(120);
  });

  it('refuses a halt of a code no suspension endpoint covers', async () => {
    await expect(startSimulator({ halts: [{ code: '00700.HK', fromMs: FROM, toMs: TO }] })).rejects.toThrow(
      /"halts"/,
    );
  });
});
