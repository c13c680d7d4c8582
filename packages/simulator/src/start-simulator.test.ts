import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimClock, type Simulator } from './start-simulator.js';

const T = Date.parse('2026-11-17T15:00:00Z'); // Tuesday, 10:00 New York
/** A clock at `startMs` running `speed` times real time (what core's `acceleratedClock` does). */
const runningFrom = (startMs: number, speed = 1): SimClock => {
  const t0 = Date.now();
  return { now: () => Math.floor(startMs + (Date.now() - t0) * speed) };
};
const DECIMAL = /^-?\d+(\.\d+)?$/;

interface Reply {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

async function call(
  sim: Simulator,
  path: string,
  token: string | undefined,
  query?: unknown,
  init: { body?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const qs = new URLSearchParams();
  if (token !== undefined) qs.set('token', token);
  if (query !== undefined) qs.set('query', typeof query === 'string' ? query : JSON.stringify(query));
  const res = await fetch(
    `${sim.url}${path}?${qs}`,
    init.body === undefined
      ? { headers: init.headers ?? {} }
      : { method: 'POST', body: init.body, headers: { 'content-type': 'application/json', ...init.headers } },
  );
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the test looks at text
  }
  return { status: res.status, text, json };
}

const kq = (code: string, over: Record<string, unknown> = {}) => ({
  trace: `t-${code}`,
  data: { code, kline_type: 1, kline_timestamp_end: 0, query_kline_num: 3, adjust_type: 0, ...over },
});
const batch = (groups: { code: string; kline_type?: number; query_kline_num?: number }[]) =>
  JSON.stringify({
    trace: 'b1',
    data: {
      data_list: groups.map((g) => ({
        code: g.code,
        kline_type: g.kline_type ?? 1,
        kline_timestamp_end: 0,
        query_kline_num: g.query_kline_num ?? 2,
        adjust_type: 0,
      })),
    },
  });
const symbols = (codes: string[]) => ({
  trace: 's1',
  data: { symbol_list: codes.map((code) => ({ code })) },
});

function expectBar(bar: unknown): void {
  const b = bar as Record<string, unknown>;
  expect(Object.keys(b).sort()).toEqual([
    'close_price',
    'high_price',
    'low_price',
    'open_price',
    'timestamp',
    'turnover',
    'volume',
  ]);
  for (const v of Object.values(b)) expect(typeof v).toBe('string');
  expect(b['timestamp']).toMatch(/^\d{10}$/);
  for (const k of ['open_price', 'close_price', 'high_price', 'low_price', 'volume', 'turnover'])
    expect(b[k]).toMatch(DECIMAL);
}

describe('startSimulator: endpoints', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      port: 0,
      seed: 5,
      clock: runningFrom(T),
      rateLimits: false,
      tokens: { demo: 'professional', hk: 'all-hk', free: 'free', basic: 'basic' },
    });
  });
  afterAll(() => sim.close());

  it('listens on 127.0.0.1 with a URL without trailing slash', () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('/kline answers {ret, msg, trace, data: {code, kline_type, kline_list}} with string fields, oldest first', async () => {
    for (const [path, code] of [
      ['/quote-stock-b-api/kline', 'AAPL.US'],
      ['/quote-b-api/kline', 'BTCUSDT'],
    ] as const) {
      const r = await call(sim, path, 'demo', kq(code, { query_kline_num: 5 }));
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ ret: 200, msg: 'ok', trace: `t-${code}` });
      const data = r.json['data'] as { code: string; kline_type: number; kline_list: unknown[] };
      expect(data.code).toBe(code);
      expect(data.kline_type).toBe(1);
      expect(data.kline_list).toHaveLength(5);
      data.kline_list.forEach(expectBar);
      const ts = data.kline_list.map((b) => Number((b as { timestamp: string }).timestamp));
      expect(ts).toEqual([...ts].sort((a, b) => a - b));
      expect(ts.every((t, i) => i === 0 || t - ts[i - 1]! === 60)).toBe(true);
    }
  });

  it('/batch-kline answers data.kline_list of {code, kline_type, kline_data}, in request order', async () => {
    const r = await call(sim, '/quote-b-api/batch-kline', 'demo', undefined, {
      body: batch([{ code: 'ETHUSDT', kline_type: 8 }, { code: 'GOLD', kline_type: 2 }, { code: 'US30' }]),
    });
    expect(r.json).toMatchObject({ ret: 200, msg: 'ok', trace: 'b1' });
    const list = (
      r.json['data'] as { kline_list: { code: string; kline_type: number; kline_data: unknown[] }[] }
    ).kline_list;
    expect(list.map((g) => [g.code, g.kline_type])).toEqual([
      ['ETHUSDT', 8],
      ['GOLD', 2],
      ['US30', 1],
    ]);
    for (const g of list) {
      expect(g.kline_data).toHaveLength(2);
      g.kline_data.forEach(expectBar);
    }
    // CFD indices report no volume.
    expect((list[2]!.kline_data[0] as { volume: string }).volume).toBe('0');
    // The log names each group's series, in the order asked.
    expect(sim.log.last()).toMatchObject({ groups: 3, series: ['ETHUSDT:8', 'GOLD:2', 'US30:1'] });
  });

  it('/depth-tick answers tick_list with decimal-string seq, ms tick_time and {price, volume} levels', async () => {
    const r = await call(
      sim,
      '/quote-stock-b-api/depth-tick',
      'demo',
      symbols(['AAPL.US', '700.HK', '600416.SH']),
    );
    expect(r.json).toMatchObject({ ret: 200, msg: 'ok', trace: 's1' });
    const ticks = (r.json['data'] as { tick_list: Record<string, unknown>[] }).tick_list;
    expect(ticks.map((t) => t['code'])).toEqual(['AAPL.US', '700.HK', '600416.SH']);
    for (const t of ticks) {
      expect(t['seq']).toMatch(/^\d+$/);
      expect(t['tick_time']).toMatch(/^\d{13}$/);
      for (const side of ['bids', 'asks'] as const) {
        for (const level of t[side] as Record<string, unknown>[]) {
          expect(level['price']).toMatch(DECIMAL);
          expect(level['volume']).toMatch(DECIMAL);
        }
      }
    }
    const general = await call(sim, '/quote-b-api/depth-tick', 'demo', symbols(['NAS100', 'BTCUSDT']));
    const [cfd, btc] = (
      general.json['data'] as {
        tick_list: { bids: Record<string, unknown>[]; asks: Record<string, unknown>[] }[];
      }
    ).tick_list;
    expect(cfd!.bids[0]).not.toHaveProperty('volume');
    expect(btc!.bids[0]!['volume']).toMatch(/^\d+\.\d{5}$/);
  });

  it('/static_info answers static_info_list with string fields, some absent', async () => {
    const r = await call(
      sim,
      '/quote-stock-b-api/static_info',
      'demo',
      symbols(['700.HK', 'AAPL.US', '000627.SZ']),
    );
    const list = (r.json['data'] as { static_info_list: Record<string, unknown>[] }).static_info_list;
    expect(list.map((x) => x['symbol'])).toEqual(['700.HK', 'AAPL.US', '000627.SZ']);
    const allowed = [
      'board',
      'bps',
      'circulating_shares',
      'currency',
      'dividend_yield',
      'eps',
      'eps_ttm',
      'exchange',
      'hk_shares',
      'lot_size',
      'name_cn',
      'name_en',
      'name_hk',
      'symbol',
      'total_shares',
    ];
    for (const info of list) {
      for (const [k, v] of Object.entries(info)) {
        expect(allowed).toContain(k);
        expect(typeof v).toBe('string');
      }
    }
    expect(list[0]).toHaveProperty('hk_shares');
    expect(list[1]).not.toHaveProperty('hk_shares');
  });

  it('suspension endpoints answer {success, timestamp, totalCount, data} sorted by publishDate, latest first', async () => {
    for (const ex of ['sse', 'nyse', 'nasdaq']) {
      const r = await call(sim, `/api/suspension/${ex}`, 'demo');
      expect(r.status).toBe(200);
      expect(r.json['success']).toBe(true);
      expect(r.json['timestamp']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      const data = r.json['data'] as Record<string, string | null>[];
      expect(r.json['totalCount']).toBe(data.length);
      expect(data.length).toBeGreaterThan(100);
      const dates = data.map((d) => d['publishDate']!);
      expect(dates).toEqual([...dates].sort().reverse());
    }
  });

  it.each([
    ['no query at all', undefined, 601, 'body empty'],
    ['an empty query', '', 601, 'body empty'],
    ['an empty object', {}, 601, 'body empty'],
    ['not JSON', '{trace:', 400, 'request header param invalid'],
    ['a JSON array', '[]', 400, 'request header param invalid'],
    ['no trace', { data: kq('AAPL.US').data }, 400, 'request header param invalid'],
    ['a numeric trace', { trace: 1, data: kq('AAPL.US').data }, 400, 'request header param invalid'],
    ['no data', { trace: 'x' }, 400, 'request header param invalid'],
    ['data = {}', { trace: 'x', data: {} }, 601, 'body empty'],
    ['kline_type 11', kq('AAPL.US', { kline_type: 11 }), 400, 'request data param invalid'],
    ['kline_type as a string', kq('AAPL.US', { kline_type: '1' }), 400, 'request data param invalid'],
    [
      'no adjust_type',
      { trace: 'x', data: { code: 'AAPL.US', kline_type: 1, kline_timestamp_end: 0, query_kline_num: 3 } },
      400,
      'request data param invalid',
    ],
    ['query_kline_num 0', kq('AAPL.US', { query_kline_num: 0 }), 400, 'request data param invalid'],
    ['a stock with kline_type 6', kq('AAPL.US', { kline_type: 6 }), 400, 'request data param invalid'],
    [
      'a stock with a timestamp',
      kq('AAPL.US', { kline_timestamp_end: 1_795_000_000 }),
      400,
      'request data param invalid',
    ],
    ['a stock with adjust_type 1', kq('AAPL.US', { adjust_type: 1 }), 400, 'request data param invalid'],
    ['an unknown code', kq('NOPE.US'), 600, 'code invalid'],
    ['a code in the wrong case', kq('aapl.US'), 600, 'code invalid'],
    ['a general code on the stock family', kq('BTCUSDT'), 600, 'code invalid'],
  ])('/quote-stock-b-api/kline refuses %s', async (_name, query, ret, msg) => {
    const r = await call(sim, '/quote-stock-b-api/kline', 'demo', query);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ret, msg });
    expect(Number.isInteger(r.json['ret'])).toBe(true);
  });

  it('refuses a timestamp for CFDs and energy but pages forex, metals and crypto; milliseconds are refused', async () => {
    expect(
      (await call(sim, '/quote-b-api/kline', 'demo', kq('US30', { kline_timestamp_end: 1_795_000_000 })))
        .json['ret'],
    ).toBe(400);
    expect(
      (await call(sim, '/quote-b-api/kline', 'demo', kq('USOIL', { kline_timestamp_end: 1_795_000_000 })))
        .json['ret'],
    ).toBe(400);
    expect(
      (
        await call(
          sim,
          '/quote-b-api/kline',
          'demo',
          kq('BTCUSDT', { kline_timestamp_end: 1_795_000_000_000 }),
        )
      ).json['ret'],
    ).toBe(400);
    for (const code of ['AUDUSD', 'Silver', 'ETHUSDT']) {
      const end = 1_794_830_400; // 2026-11-16T13:20:00Z, a Monday
      const r = await call(
        sim,
        '/quote-b-api/kline',
        'demo',
        kq(code, { kline_timestamp_end: end, query_kline_num: 2 }),
      );
      const list = (r.json['data'] as { kline_list: { timestamp: string }[] }).kline_list;
      expect(list.map((b) => b.timestamp)).toEqual([String(end - 60), String(end)]);
    }
  });

  it('refuses a code the plan does not cover with 604', async () => {
    expect((await call(sim, '/quote-stock-b-api/kline', 'hk', kq('AAPL.US'))).json).toMatchObject({
      ret: 604,
      msg: 'code unauthorized',
    });
    expect((await call(sim, '/quote-b-api/kline', 'hk', kq('BTCUSDT'))).json).toMatchObject({
      ret: 604,
      msg: 'code unauthorized',
    });
    expect((await call(sim, '/quote-stock-b-api/kline', 'hk', kq('700.HK'))).json['ret']).toBe(200);
  });

  it('refuses a missing or unknown token with 401 and suspension errors with HTTP 500', async () => {
    expect((await call(sim, '/quote-stock-b-api/kline', undefined, kq('AAPL.US'))).json).toMatchObject({
      ret: 401,
      msg: 'token invalid',
      trace: 't-AAPL.US',
    });
    expect((await call(sim, '/quote-stock-b-api/kline', 'wrong', kq('AAPL.US'))).json).toMatchObject({
      ret: 401,
      msg: 'token invalid',
    });
    const s = await call(sim, '/api/suspension/sse', 'wrong');
    expect(s.status).toBe(500);
    expect(s.json).toEqual({ success: false, error: 'token invalid' });
  });

  it('refuses more batch groups than the plan allows with 605, and cuts bars per group to 2', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => ({ code: 'BTCUSDT', kline_type: (i % 10) + 1 }));
    expect(
      (await call(sim, '/quote-b-api/batch-kline', 'free', undefined, { body: batch(eleven) })).json,
    ).toMatchObject({ ret: 605, msg: 'too many requests' });
    const ok = await call(sim, '/quote-b-api/batch-kline', 'free', undefined, {
      body: batch([{ code: 'BTCUSDT', query_kline_num: 9 }]),
    });
    expect(
      (ok.json['data'] as { kline_list: { kline_data: unknown[] }[] }).kline_list[0]!.kline_data,
    ).toHaveLength(2);
  });

  it('cuts /kline to 500 bars and /depth-tick and /static_info to the plan’s codes silently', async () => {
    const r = await call(sim, '/quote-b-api/kline', 'demo', kq('BTCUSDT', { query_kline_num: 800 }));
    expect((r.json['data'] as { kline_list: unknown[] }).kline_list).toHaveLength(500);
    const seven = ['AAPL.US', 'GOOGL.US', 'UNH.US', 'MSFT.US', 'AMZN.US', 'TSLA.US', 'NVDA.US'];
    const d = await call(
      sim,
      '/quote-stock-b-api/depth-tick',
      'free',
      symbols([...seven.slice(0, 6), 'NOPE.US']),
    );
    expect((d.json['data'] as { tick_list: { code: string }[] }).tick_list.map((t) => t.code)).toEqual(
      seven.slice(0, 5),
    );
    const s = await call(sim, '/quote-stock-b-api/static_info', 'free', symbols(seven));
    expect((s.json['data'] as { static_info_list: unknown[] }).static_info_list).toHaveLength(5);
  });

  it('answers 404 for unknown paths and 405 for the wrong method', async () => {
    expect((await call(sim, '/quote-b-api/static_info', 'demo', symbols(['BTCUSDT']))).status).toBe(404);
    expect((await call(sim, '/quote-b-api/batch-kline', 'demo', undefined)).status).toBe(405);
  });

  it('logs every request with a token label, never the token', async () => {
    const before = sim.log.length;
    await call(sim, '/quote-stock-b-api/kline', 'demo', kq('AAPL.US'));
    const e = sim.log.last()!;
    expect(sim.log.length).toBe(before + 1);
    expect(e).toMatchObject({
      endpoint: 'kline',
      family: 'stock',
      plan: 'professional',
      status: 200,
      ret: 200,
      codes: 1,
      series: ['AAPL.US:1'],
      trace: 't-AAPL.US',
    });
    expect(e.token).toMatch(/^professional#[0-9a-f]{6}$/);
    const dump = JSON.stringify(sim.log.entries());
    for (const token of ['"demo"', '"hk"', 'wrong"', 'token=']) expect(dump).not.toContain(token);
  });
});

describe('startSimulator: determinism and the market clock', () => {
  it('serves the same bars and books for the same seed, different ones for another', async () => {
    const bodies: string[] = [];
    for (const seed of [9, 9, 10]) {
      const sim = await startSimulator({ seed, clock: { now: () => T } });
      const k = await call(sim, '/quote-b-api/kline', 'demo', kq('ETHUSDT', { query_kline_num: 20 }));
      const d = await call(sim, '/quote-stock-b-api/depth-tick', 'demo', symbols(['AAPL.US']));
      bodies.push(k.text + d.text);
      await sim.close();
    }
    expect(bodies[0]).toBe(bodies[1]);
    expect(bodies[2]).not.toBe(bodies[0]);
  });

  it('moves the forming bar between polls as the given clock runs', async () => {
    // Daily bars: 9 market hours (54 real seconds at 600x) before this one closes, so a slow machine cannot flake it.
    const sim = await startSimulator({ seed: 2, clock: runningFrom(T, 600), rateLimits: false });
    try {
      const a = await call(
        sim,
        '/quote-b-api/kline',
        'demo',
        kq('BTCUSDT', { kline_type: 8, query_kline_num: 1 }),
      );
      await new Promise((r) => setTimeout(r, 300));
      const b = await call(
        sim,
        '/quote-b-api/kline',
        'demo',
        kq('BTCUSDT', { kline_type: 8, query_kline_num: 1 }),
      );
      const [ba] = (a.json['data'] as { kline_list: Record<string, string>[] }).kline_list;
      const [bb] = (b.json['data'] as { kline_list: Record<string, string>[] }).kline_list;
      expect(bb!['timestamp']).toBe(ba!['timestamp']);
      expect(Number(bb!['volume'])).toBeGreaterThan(Number(ba!['volume']));
      expect(sim.marketNow() - T).toBeGreaterThan(150_000);
    } finally {
      await sim.close();
    }
  });

  it('closes the forming 1-minute bar and starts a new one when a manual clock crosses the minute', async () => {
    let now = T + 30_000; // 10:00:30 New York
    const sim = await startSimulator({ seed: 4, clock: { now: () => now }, rateLimits: false });
    try {
      const latest = async () =>
        (
          (await call(sim, '/quote-stock-b-api/kline', 'demo', kq('AAPL.US', { query_kline_num: 2 }))).json[
            'data'
          ] as { kline_list: Record<string, string>[] }
        ).kline_list.map((b) => b['timestamp']);
      expect(await latest()).toEqual([String((T - 60_000) / 1000), String(T / 1000)]);
      expect(sim.market.bars('AAPL.US', 1, sim.marketNow(), 1)[0]).toMatchObject({
        startMs: T,
        forming: true,
      });
      now = T + 60_000;
      expect(await latest()).toEqual([String(T / 1000), String((T + 60_000) / 1000)]);
      const [closed, forming] = sim.market.bars('AAPL.US', 1, sim.marketNow(), 2);
      expect(closed).toMatchObject({ startMs: T, endMs: T + 60_000, forming: false });
      expect(forming).toMatchObject({ startMs: T + 60_000, forming: true });
      expect(sim.log.entries().map((e) => e.marketMs - T)).toEqual([30_000, 60_000]);
    } finally {
      await sim.close();
    }
  });

  it('serves the labelling it was given, and the default one otherwise', async () => {
    const jan = Date.parse('2026-01-13T16:00:00Z'); // Tuesday, 11:00 New York
    const hourly = async (sim: Simulator) =>
      (
        (
          await call(
            sim,
            '/quote-stock-b-api/kline',
            'demo',
            kq('AAPL.US', { kline_type: 5, query_kline_num: 3 }),
          )
        ).json['data'] as { kline_list: Record<string, string>[] }
      ).kline_list.map((b) => new Date(Number(b['timestamp']) * 1000).toISOString());
    await using byClock = await startSimulator({
      clock: { now: () => jan },
      labelling: { intraday: 'clock' },
    });
    expect(byClock.labelling).toEqual({
      intraday: 'clock',
      daily: 'local-midnight',
      weekly: 'calendar',
      monthly: 'calendar',
    });
    expect(await hourly(byClock)).toEqual([
      '2026-01-13T14:00:00.000Z',
      '2026-01-13T15:00:00.000Z',
      '2026-01-13T16:00:00.000Z',
    ]);
    await using bySession = await startSimulator({ clock: { now: () => jan } });
    expect(await hourly(bySession)).toEqual([
      '2026-01-12T20:30:00.000Z',
      '2026-01-13T14:30:00.000Z',
      '2026-01-13T15:30:00.000Z',
    ]);
  });
});

describe('startSimulator: options and lifecycle', () => {
  it.each([
    [{ port: -1 }, /"port"/],
    [{ clock: {} as SimClock }, /"clock"/],
    [{ clock: { now: () => Number.NaN } }, /"clock"/],
    [
      { labelling: { daily: 'noon' as 'utc-midnight' } },
      /"labelling\.daily" must be one of local-midnight, utc-midnight, session-open, in-session, got "noon"/,
    ],
    [
      { labelling: { hourly: 'clock' } as object },
      /"labelling" axes are intraday, daily, weekly, monthly, got "hourly"/,
    ],
    [{ seed: 1.5 }, /"seed"/],
    [{ tokens: { t: 'gold' as 'free' } }, /"tokens".*gold/],
    // An array looks like a list of tokens; it would start with token "0" and refuse every real one.
    [{ tokens: ['professional'] as never }, /"tokens" must be an object of token to plan/],
    [{ limitMode: 'lenient' as 'strict' }, /"limitMode"/],
    [{ dayTimeZone: 'Mars/Olympus' }, /"dayTimeZone".*Mars\/Olympus/],
    [{ failureStatus: 'always' as 'ok' }, /"failureStatus"/],
  ])('rejects a bad option up front, naming it: %o', async (opts, message) => {
    await expect(startSimulator(opts)).rejects.toThrow(message);
  });

  it('closes idempotently and frees the port', async () => {
    const sim = await startSimulator({ port: 0 });
    const { url } = sim;
    await Promise.all([sim.close(), sim.close()]);
    await sim.close();
    await expect(fetch(`${url}/api/suspension/sse?token=demo`)).rejects.toThrow();
  });

  it('serves a synthetic universe next to the catalogue', async () => {
    await using sim = await startSimulator({ syntheticProducts: 2_000, clock: { now: () => T } });
    expect(sim.market.products().length).toBeGreaterThan(2_000);
    const r = await call(sim, '/quote-b-api/depth-tick', 'demo', symbols(['SYN4USDT', 'BTCUSDT']));
    expect((r.json['data'] as { tick_list: unknown[] }).tick_list).toHaveLength(2);
  });
});
