import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from './start-simulator.js';

// Limits over HTTP with an injected clock: arrivals happen at exactly the times the test sets.
const T = Date.parse('2026-11-17T15:00:00Z');
const kline = (code = 'AAPL.US') =>
  `query=${encodeURIComponent(JSON.stringify({ trace: 'l', data: { code, kline_type: 1, kline_timestamp_end: 0, query_kline_num: 1, adjust_type: 0 } }))}`;
const depth = `query=${encodeURIComponent(JSON.stringify({ trace: 'd', data: { symbol_list: [{ code: 'AAPL.US' }] } }))}`;
const batchBody = JSON.stringify({
  trace: 'b',
  data: {
    data_list: [
      { code: 'AAPL.US', kline_type: 1, kline_timestamp_end: 0, query_kline_num: 2, adjust_type: 0 },
    ],
  },
});

describe('rate limits over HTTP', () => {
  let sim: Simulator;
  let now = T;
  afterEach(() => sim.close());
  const start = (opts: Parameters<typeof startSimulator>[0] = {}) =>
    startSimulator({
      clock: { now: () => now },
      tokens: { b: 'basic', p: 'premium', f: 'free' },
      ...opts,
    });
  const get = async (path: string, token: string, query: string) =>
    (await (await fetch(`${sim.url}${path}?token=${token}&${query}`)).json()) as { ret: number; msg: string };
  const post = async (token: string) =>
    (await (
      await fetch(`${sim.url}/quote-stock-b-api/batch-kline?token=${token}`, {
        method: 'POST',
        body: batchBody,
      })
    ).json()) as { ret: number };

  it('Basic: a second request in the same second is refused with 429 and logged with its rule', async () => {
    now = T;
    sim = await start();
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    now = T + 999;
    expect(await get('/quote-stock-b-api/depth-tick', 'b', depth)).toMatchObject({
      ret: 429,
      msg: 'rate limit',
    });
    now = T + 1_999;
    expect((await get('/quote-stock-b-api/depth-tick', 'b', depth)).ret).toBe(200);
    expect(sim.log.refused().map((e) => [e.endpoint, e.refusedBy, e.ret])).toEqual([
      ['depth-tick', 'combined', 429],
    ]);
  });

  it('limits follow the token: another token is not affected', async () => {
    now = T;
    sim = await start({ tokens: { b: 'basic', b2: 'basic' } });
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    expect((await get('/quote-stock-b-api/kline', 'b2', kline())).ret).toBe(200);
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(429);
  });

  it('counts both families together for the /batch-kline interval (Premium: 2 s)', async () => {
    now = T;
    sim = await start();
    expect((await post('p')).ret).toBe(200);
    now = T + 1_999;
    const general = (await (
      await fetch(`${sim.url}/quote-b-api/batch-kline?token=p`, {
        method: 'POST',
        body: JSON.stringify({
          trace: 'g',
          data: {
            data_list: [
              { code: 'BTCUSDT', kline_type: 1, kline_timestamp_end: 0, query_kline_num: 2, adjust_type: 0 },
            ],
          },
        }),
      })
    ).json()) as { ret: number };
    expect(general.ret).toBe(429);
    expect(sim.log.last()!.refusedBy).toBe('batch-kline-interval');
    now = T + 2_000 + 1_999; // the refused arrival at +1 999 counts too (countRefused)
    expect((await post('p')).ret).toBe(200);
  });

  it('one suspension query per minute across the three exchanges, refused as HTTP 500', async () => {
    now = T;
    sim = await start();
    expect((await fetch(`${sim.url}/api/suspension/sse?token=p`)).status).toBe(200);
    now = T + 30_000;
    const r = await fetch(`${sim.url}/api/suspension/nasdaq?token=p`);
    expect(r.status).toBe(500);
    expect(await r.json()).toEqual({ success: false, error: 'rate limit' });
    expect(sim.log.last()!.refusedBy).toBe('suspension-interval');
  });

  it('with countRefused false, a refused request does not extend the wait', async () => {
    now = T;
    sim = await start({ countRefused: false });
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
    now = T + 5_000;
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(429);
    now = T + 10_000;
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
  });

  it('failureStatus "mirror" carries the failing ret in the HTTP status', async () => {
    now = T;
    sim = await start({ failureStatus: 'mirror' });
    const ok = await fetch(`${sim.url}/quote-stock-b-api/kline?token=b&${kline()}`);
    expect(ok.status).toBe(200);
    const limited = await fetch(`${sim.url}/quote-stock-b-api/kline?token=b&${kline()}`);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ ret: 429 });
    now = T + 5_000;
    expect((await fetch(`${sim.url}/quote-stock-b-api/kline?token=nope&${kline()}`)).status).toBe(401);
    now = T + 10_000;
    expect((await fetch(`${sim.url}/quote-stock-b-api/kline?token=b&${kline('NOPE.US')}`)).status).toBe(400);
  });

  it('keeps rate limits, the request log and market time on the one clock it is given', async () => {
    now = T;
    sim = await start();
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    now = T + 500;
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(429);
    now = T + 1_500; // the refused arrival at +500 counts too (countRefused)
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    expect(sim.marketNow()).toBe(T + 1_500);
    expect(sim.log.entries().map((e) => [e.arrivalMs - T, e.marketMs - T])).toEqual([
      [0, 0],
      [500, 500],
      [1_500, 1_500],
    ]);
  });

  it('resets the daily count at midnight of dayTimeZone on the given clock', async () => {
    const midnight = Date.parse('2026-11-17T16:00:00Z'); // 00:00 Shanghai
    now = midnight - 1;
    sim = await start({ tokens: { f: { plan: 'free', overrides: { perDay: 1 } } } });
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
    now = midnight - 1 + 20_000;
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
    expect(sim.log.refused()).toEqual([]);
    now = midnight + 40_000;
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(429);
    expect(sim.log.last()!.refusedBy).toBe('per-day');
  });

  it('refuses on the default clock (Date.now) too: Free admits one request per 10 s', async () => {
    sim = await startSimulator({ tokens: { f: 'free' } });
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
    expect(await get('/quote-stock-b-api/depth-tick', 'f', depth)).toMatchObject({
      ret: 429,
      msg: 'rate limit',
    });
    expect(sim.log.refused().map((e) => e.refusedBy)).toEqual(['combined']);
  });

  it('observe mode serves every request but logs the rule each one broke', async () => {
    now = T;
    sim = await start({ limitMode: 'observe' });
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    now = T + 10;
    expect((await get('/quote-stock-b-api/kline', 'b', kline())).ret).toBe(200);
    expect(sim.log.refused()).toEqual([]);
    expect(sim.log.violations().map((e) => [e.violated, e.ret])).toEqual([['combined', 200]]);
  });

  it('resetLimits starts every window afresh', async () => {
    now = T;
    sim = await start();
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(429);
    sim.resetLimits();
    expect((await get('/quote-stock-b-api/kline', 'f', kline())).ret).toBe(200);
  });
});
