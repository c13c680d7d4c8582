import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultInjector } from './fault-injector.js';
import { startSimulator, type Simulator } from './start-simulator.js';

const T = Date.parse('2026-11-17T15:00:00Z');
const frozen = { now: () => T }; // no bar closes between two requests of a test

describe('FaultInjector', () => {
  it('hits only the next N matching requests of a scheduled rule', () => {
    const f = new FaultInjector([{ kind: 'http-5xx', endpoint: 'kline', times: 2 }], 1);
    expect(f.pick('depth-tick')).toEqual([]);
    expect(f.pick('kline').map((r) => r.kind)).toEqual(['http-5xx']);
    expect(f.pick('kline').map((r) => r.kind)).toEqual(['http-5xx']);
    expect(f.pick('kline')).toEqual([]);
    expect(f.rules()).toEqual([]);
  });

  it('draws probabilities from the seed: same seed, same hits; about the right share', () => {
    const draw = (seed: number) => {
      const f = new FaultInjector([{ kind: 'drop', probability: 0.25 }], seed);
      return Array.from({ length: 2_000 }, () => f.pick('kline').length);
    };
    const a = draw(3);
    expect(draw(3)).toEqual(a);
    expect(draw(4)).not.toEqual(a);
    const share = a.reduce((s, x) => s + x, 0) / a.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
  });

  it('rejects invalid rules, naming the field', () => {
    expect(() => new FaultInjector([{ kind: 'nope' as 'drop' }], 1)).toThrow(/"kind"/);
    expect(() => new FaultInjector([{ kind: 'drop', probability: 2 }], 1)).toThrow(/"probability"/);
    expect(() => new FaultInjector([{ kind: 'drop', times: 0 }], 1)).toThrow(/"times"/);
    expect(() => new FaultInjector([{ kind: 'http-5xx', status: 404 }], 1)).toThrow(/"status"/);
  });
});

describe('fault injection over HTTP', () => {
  let sim: Simulator;
  afterEach(() => sim.close());
  const url = (s: Simulator, code = 'BTCUSDT') =>
    `${s.url}/quote-b-api/kline?token=demo&query=${encodeURIComponent(JSON.stringify({ trace: 'f', data: { code, kline_type: 1, kline_timestamp_end: 0, query_kline_num: 4, adjust_type: 0 } }))}`;

  it('http-5xx answers the status with a non-JSON body for the next N requests only', async () => {
    sim = await startSimulator({ clock: frozen, rateLimits: false });
    sim.addFault({ kind: 'http-5xx', endpoint: 'kline', times: 2, status: 502 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(url(sim))).status);
    expect(statuses).toEqual([502, 502, 200]);
    expect(sim.log.count({ fault: 'http-5xx' })).toBe(2);
  });

  it('malformed-json and truncated send bodies that do not parse; truncated keeps a valid Content-Length', async () => {
    sim = await startSimulator({
      clock: frozen,
      rateLimits: false,
      faults: [{ kind: 'malformed-json', times: 1 }],
    });
    const bad = await fetch(url(sim));
    expect(bad.status).toBe(200);
    await expect(bad.json()).rejects.toThrow();
    sim.setFaults([{ kind: 'truncated' }]);
    const cut = await fetch(url(sim));
    const text = await cut.text();
    expect(Number(cut.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(() => JSON.parse(text) as unknown).toThrow();
    expect(text.startsWith('{"ret":200')).toBe(true);
  });

  it('drop destroys the connection without an answer', async () => {
    sim = await startSimulator({ clock: frozen, rateLimits: false, faults: [{ kind: 'drop' }] });
    await expect(fetch(url(sim))).rejects.toThrow();
    expect(sim.log.last()).toMatchObject({ status: 0, faults: ['drop'] });
  });

  it('latency delays the answer', async () => {
    sim = await startSimulator({
      clock: frozen,
      rateLimits: false,
      faults: [{ kind: 'latency', latencyMs: 150 }],
    });
    const t0 = performance.now();
    const res = await fetch(url(sim));
    expect(res.status).toBe(200);
    // Logged, not timed: the entry carries the fault; the delay is a lower bound only.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(sim.log.last()!.faults).toEqual(['latency']);
  });

  it('rate-limit forces ret 429 (and HTTP 500 on suspension endpoints) without a refusing rule', async () => {
    sim = await startSimulator({ clock: frozen, rateLimits: false, faults: [{ kind: 'rate-limit' }] });
    expect(await (await fetch(url(sim))).json()).toEqual({ ret: 429, msg: 'rate limit', trace: 'f' });
    const s = await fetch(`${sim.url}/api/suspension/nyse?token=demo`);
    expect(s.status).toBe(500);
    expect(await s.json()).toEqual({ success: false, error: 'rate limit' });
    expect(sim.log.refused()).toEqual([]);
  });

  it('kline quirks: newest first then repeated; empty volume and turnover in the first bar', async () => {
    sim = await startSimulator({ clock: frozen, rateLimits: false });
    const clean = (
      (await (await fetch(url(sim))).json()) as { data: { kline_list: Record<string, string>[] } }
    ).data.kline_list;
    sim.setFaults([{ kind: 'kline-newest-first-repeated', times: 1 }]);
    const quirky = (
      (await (await fetch(url(sim))).json()) as { data: { kline_list: Record<string, string>[] } }
    ).data.kline_list;
    const ts = (l: Record<string, string>[]) => l.map((b) => b['timestamp']);
    const newestFirst = ts(clean).reverse();
    expect(ts(quirky)).toEqual([...newestFirst, ...newestFirst]);
    sim.setFaults([{ kind: 'kline-empty-first-volume', times: 1 }]);
    const empty = (
      (await (await fetch(url(sim))).json()) as { data: { kline_list: Record<string, string>[] } }
    ).data.kline_list;
    expect(empty[0]).toMatchObject({ volume: '', turnover: '' });
    expect(empty[1]!['volume']).not.toBe('');
  });

  it('injects faults into one request through the x-sim-fault header', async () => {
    sim = await startSimulator({ clock: frozen, rateLimits: false });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url(sim), { headers: { 'x-sim-fault': 'http-5xx' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(503);
    expect((await fetch(url(sim))).status).toBe(200);
  });
});
