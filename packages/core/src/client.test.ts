import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { QuoteflowClient } from './client.js';
import type { QuoteflowClientOptions, RequestRecord } from './client-types.js';
import { ManualClock, systemClock, type Clock } from './clock.js';
import {
  AbortedError,
  ClientClosedError,
  InvalidOptionError,
  MissingItemsError,
  QuoteflowError,
  UnreachableServiceError,
} from './errors.js';
import { planLimits, type EndpointKind } from './plans.js';
import type { RequestScheduler, ScheduledRequest } from './request-scheduler.js';
import { sharedSchedulerFor, type PlanScheduler } from './scheduler/index.js';

const TOKEN = 'SECRET-TOKEN-9f3a7c';

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly params: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The decoded `query` JSON (GET) or body JSON (POST). */
  readonly json: { trace: string; data: Record<string, unknown> } | undefined;
}

type Reply = { status?: number; json?: unknown; text?: string } | 'destroy' | 'hang';
let handler: (seen: Seen, index: number) => Reply = () => ({ status: 404, text: 'no handler' });
const seen: Seen[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const raw = req.method === 'POST' ? body : url.searchParams.get('query');
      const s: Seen = {
        method: req.method ?? '',
        path: url.pathname,
        params: url.searchParams,
        headers: req.headers,
        body,
        json: raw ? (JSON.parse(raw) as Seen['json']) : undefined,
      };
      seen.push(s);
      const reply = handler(s, seen.length - 1);
      if (reply === 'destroy') return req.socket.destroy();
      if (reply === 'hang') return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(reply.text ?? JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const clients: QuoteflowClient[] = [];
afterEach(async () => {
  seen.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** A recording pass-through scheduler, a test fake in addition to the integration tests' real one. */
function recordingScheduler() {
  const scheduled: ScheduledRequest[] = [];
  const rateLimited: EndpointKind[] = [];
  const scheduler: RequestScheduler = {
    schedule: (request, send) => {
      scheduled.push(request);
      if (request.signal?.aborted === true) return Promise.reject(request.signal.reason);
      return send();
    },
    reportRateLimited: (endpoint) => rateLimited.push(endpoint),
  };
  return { scheduler, scheduled, rateLimited };
}

function client(options: Partial<QuoteflowClientOptions> = {}, rec = recordingScheduler()) {
  const c = new QuoteflowClient({
    baseUrl,
    token: TOKEN,
    plan: 'free',
    scheduler: rec.scheduler,
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
    ...options,
  });
  clients.push(c);
  return { c, ...rec };
}

const ok = (data: unknown, trace = 't') => ({ json: { ret: 200, msg: 'ok', trace, data } });
const tick = (code: string, seq = '1') => ({
  code,
  seq,
  tick_time: '1700000000000',
  bids: [{ price: '1.5', volume: '10' }],
  asks: [],
});
const depthEcho = (s: Seen) =>
  ok(
    { tick_list: (s.json!.data['symbol_list'] as { code: string }[]).map((x) => tick(x.code)) },
    s.json!.trace,
  );
const bar = (ts: number) => ({
  timestamp: String(ts),
  open_price: '1',
  close_price: '2',
  high_price: '3',
  low_price: '0.5',
  volume: '10',
  turnover: '20',
});
const batchEcho = (s: Seen) =>
  ok({
    kline_list: (s.json!.data['data_list'] as { code: string; kline_type: number }[]).map((g) => ({
      code: g.code,
      kline_type: g.kline_type,
      kline_data: [bar(1_700_000_000), bar(1_700_000_060)],
    })),
  });

async function failure(p: Promise<unknown>): Promise<QuoteflowError> {
  try {
    await p;
  } catch (err) {
    return err as QuoteflowError;
  }
  throw new Error('expected a rejection');
}

describe('QuoteflowClient request building', () => {
  it('sends the token in the query string, the query as URL-encoded JSON and Accept: application/json', async () => {
    handler = depthEcho;
    const { c } = client();
    const ticks = await c.depth(['EURGBP']);
    expect(ticks).toHaveLength(1);
    const [s] = seen;
    expect(s).toMatchObject({ method: 'GET', path: '/quote-b-api/depth-tick' });
    expect(s!.params.get('token')).toBe(TOKEN);
    expect(s!.json).toEqual({ trace: expect.any(String), data: { symbol_list: [{ code: 'EURGBP' }] } });
    expect(s!.headers['accept']).toBe('application/json');
  });

  it('posts /batch-kline with a JSON body and only the token in the query string', async () => {
    handler = batchEcho;
    const { c } = client();
    const res = await c.batchKline([{ code: 'AAPL.US', klineType: 1 }]);
    expect(res[0]!.bars).toHaveLength(2);
    const [s] = seen;
    expect(s).toMatchObject({ method: 'POST', path: '/quote-stock-b-api/batch-kline' });
    expect([...s!.params.keys()]).toEqual(['token']);
    expect(s!.headers['content-type']).toBe('application/json');
    expect(s!.json!.data).toEqual({
      data_list: [
        { code: 'AAPL.US', kline_type: 1, kline_timestamp_end: 0, query_kline_num: 2, adjust_type: 0 },
      ],
    });
  });

  it('splits a mixed depth batch by family and to the plan codes per request, answering in the order asked', async () => {
    handler = depthEcho;
    const { c, scheduled } = client({ plan: 'free' });
    const codes = ['AAPL.US', 'EURGBP', '700.HK', 'BTCUSDT', 'GOLD', 'USOIL', 'ETHUSDT', 'AUDUSD', 'UKOIL'];
    const ticks = await c.depth(codes, { sourceId: 'depth-1' });
    expect(ticks.map((t) => t.code)).toEqual(codes);
    const sizes = seen.map((s) => [s.path, (s.json!.data['symbol_list'] as unknown[]).length]).sort();
    expect(sizes).toEqual([
      ['/quote-b-api/depth-tick', 2],
      ['/quote-b-api/depth-tick', 5],
      ['/quote-stock-b-api/depth-tick', 2],
    ]);
    expect(
      scheduled.every(
        (r) => r.endpoint === 'depth-tick' && r.priority === 'live' && r.sourceId === 'depth-1',
      ),
    ).toBe(true);
  });

  it('splits /batch-kline groups to the plan group cap and never asks more than 2 bars per group', async () => {
    handler = batchEcho;
    const { c } = client({ plan: 'free', limitOverrides: { batchKlineGroups: 5 } });
    const groups = Array.from({ length: 12 }, (_, i) => ({ code: `C${i}USDT`, klineType: 1 as const }));
    const res = await c.batchKline(groups);
    expect(res.map((r) => r.code)).toEqual(groups.map((g) => g.code));
    expect(seen.map((s) => (s.json!.data['data_list'] as unknown[]).length)).toEqual([5, 5, 2]);
    expect(
      seen.flatMap((s) =>
        (s.json!.data['data_list'] as { query_kline_num: number }[]).map((g) => g.query_kline_num),
      ),
    ).toSatisfy((n: number[]) => n.every((x) => x === 2));
  });

  it('uses a unique trace for every request, retries included', async () => {
    handler = (s, i) => (i === 0 ? { status: 502, text: 'bad gateway' } : depthEcho(s));
    const { c } = client({ plan: 'basic' });
    await c.depth(['EURGBP']);
    await c.depth(['GOLD']);
    const traces = seen.map((s) => s.json!.trace);
    expect(traces).toHaveLength(3);
    expect(new Set(traces).size).toBe(3);
  });

  it('refuses a stock /kline end time and an over-sized count before sending anything', async () => {
    handler = () => ({ status: 500, text: 'must not be called' });
    const { c } = client();
    expect(
      await failure(c.kline({ code: 'AAPL.US', klineType: 1, count: 10, endMs: 1_700_000_000_000 })),
    ).toBeInstanceOf(InvalidOptionError);
    expect(await failure(c.kline({ code: 'BTCUSDT', klineType: 1, count: 501 }))).toMatchObject({
      code: 'QF_INVALID_OPTION',
      option: 'count',
    });
    expect(await failure(c.staticInfo(['BTCUSDT']))).toMatchObject({ code: 'QF_INVALID_OPTION' });
    expect(seen).toHaveLength(0);
  });

  it('pages crypto /kline backwards with kline_timestamp_end in seconds', async () => {
    handler = () =>
      ok({ code: 'BTCUSDT', kline_type: 1, kline_list: [bar(1_699_999_940), bar(1_700_000_000)] });
    const { c } = client();
    const bars = await c.kline(
      { code: 'BTCUSDT', klineType: 1, count: 2, endMs: 1_700_000_000_999 },
      { priority: 'backfill' },
    );
    expect(bars.map((b) => b.tsMs)).toEqual([1_699_999_940_000, 1_700_000_000_000]);
    expect(seen[0]!.json!.data).toMatchObject({ kline_timestamp_end: 1_700_000_000, query_kline_num: 2 });
  });

  it('uses the family override', async () => {
    handler = depthEcho;
    const { c } = client({ families: { XYZ: 'stock' } });
    await c.depth(['XYZ']);
    await c.depth(['ABC'], { family: 'stock' });
    expect(seen.map((s) => s.path)).toEqual([
      '/quote-stock-b-api/depth-tick',
      '/quote-stock-b-api/depth-tick',
    ]);
  });
});

describe('QuoteflowClient request sizing (property)', () => {
  const CODES = [
    'AAPL.US',
    '700.HK',
    '600416.SH',
    '000627.SZ',
    'BTCUSDT',
    'ETHUSDT',
    'EURGBP',
    'AUDUSD',
    'GOLD',
    'Silver',
    'USOIL',
    'US500',
  ];
  it('never sends more codes or groups than the plan allows, never mixes families, and answers every one in order', async () => {
    handler = (s) => (s.method === 'POST' ? batchEcho(s) : depthEcho(s));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...CODES), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 10 }),
        async (codes, codesPerRequest, batchKlineGroups) => {
          seen.length = 0;
          const { c } = client({ plan: 'free', limitOverrides: { codesPerRequest, batchKlineGroups } });
          const unique = [...new Set(codes)];
          expect((await c.depth(codes)).map((t) => t.code)).toEqual(unique);
          const groups = unique.flatMap((code) => [
            { code, klineType: 1 as const },
            { code, klineType: 8 as const },
          ]);
          expect((await c.batchKline(groups)).map((g) => `${g.code}:${g.klineType}`)).toEqual(
            groups.map((g) => `${g.code}:${g.klineType}`),
          );
          for (const s of seen) {
            const list = (s.json!.data['symbol_list'] ?? s.json!.data['data_list']) as { code: string }[];
            expect(list.length).toBeLessThanOrEqual(s.method === 'POST' ? batchKlineGroups : codesPerRequest);
            const family = s.path.startsWith('/quote-stock-b-api') ? 'stock' : 'general';
            for (const item of list) expect(item.code.includes('.') ? 'stock' : 'general').toBe(family);
          }
          await c.close();
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('QuoteflowClient retries', () => {
  it('does not retry an address that refused the first contact (a wrong base URL), and retries once the service answered', async () => {
    // A server of its own: it answers once (a 503 is an answer), then goes away.
    const own = createServer((_req, res) => res.writeHead(503).end('busy'));
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    const ownUrl = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
    const retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
    const closeOwn = () => {
      own.closeAllConnections();
      return new Promise((resolve) => own.close(resolve));
    };
    try {
      const answered = client({ baseUrl: ownUrl, retry }).c;
      expect(await failure(answered.depth(['EURGBP']))).toMatchObject({
        code: 'QF_HTTP_STATUS',
        attempts: 3,
      });
      await closeOwn();
      // Nothing listens there now: a client that never had an answer says so at once.
      const fresh = client({ baseUrl: ownUrl, retry: { ...retry, budgetMs: 60_000 } });
      const err = await failure(fresh.c.depth(['EURGBP']));
      expect(err).toBeInstanceOf(UnreachableServiceError);
      expect(err).toMatchObject({ code: 'QF_NETWORK', retryable: false, attempts: 1 });
      expect(err.message).toContain(`depth-tick: no service at ${ownUrl}: connect ECONNREFUSED 127.0.0.1:`);
      expect(err.message).not.toContain(TOKEN);
      expect(fresh.scheduled).toHaveLength(1);
      // The client that had its answer takes the refusal for an outage: retried.
      expect(await failure(answered.depth(['EURGBP']))).toMatchObject({
        code: 'QF_NETWORK',
        retryable: true,
        attempts: 3,
      });
    } finally {
      if (own.listening) await closeOwn();
    }
  });

  it.each([
    ['HTTP 502 without JSON', () => ({ status: 502, text: '<html>bad gateway</html>' }), 'QF_HTTP_STATUS'],
    [
      'a malformed 200 body',
      () => ({ status: 200, text: '{"ret":200,"data":{"tick_list":"nope"}}' }),
      'QF_DECODE',
    ],
    ['ret 429', () => ({ json: { ret: 429, msg: 'rate limit', trace: 't' } }), 'QF_RATE_LIMITED'],
    ['a dropped connection', () => 'destroy' as const, 'QF_NETWORK'],
  ])(
    'retries %s up to maxAttempts, then raises one error recording the attempts',
    async (_name, reply, code) => {
      handler = reply as () => Reply;
      const { c } = client({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } });
      const err = await failure(c.depth(['EURGBP']));
      expect(err).toMatchObject({ code, attempts: 3, retryable: true });
      expect(err.message).toMatch(/after 3 attempts/);
      expect(seen).toHaveLength(3);
    },
  );

  it('recovers when a retry succeeds and tells the scheduler about a rate limit', async () => {
    handler = (s, i) =>
      i === 0 ? { status: 429, json: { ret: 429, msg: 'rate limit', trace: 't' } } : depthEcho(s);
    const { c, rateLimited } = client();
    expect(await c.depth(['EURGBP'])).toHaveLength(1);
    expect(rateLimited).toEqual(['depth-tick']);
  });

  it.each([
    [
      'its own error body (HTTP 500, success: false)',
      () => ({ status: 500, json: { success: false, error: 'busy' } }),
    ],
    ['an answer that is not JSON', () => ({ status: 502, text: '<html>bad gateway</html>' })],
  ])(
    'reports a failed suspension query at once, %s: a retry would wait a minute for the slot',
    async (_n, reply) => {
      handler = reply as () => Reply;
      const { c } = client();
      const err = await failure(c.suspensions('nyse'));
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/^suspension/);
      expect(seen).toHaveLength(1);
      const patient = client({ retry: { suspensionMaxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
      await failure(patient.c.suspensions('nyse'));
      expect(seen).toHaveLength(3);
    },
  );

  it('reports each attempt that left to onRequest, with its outcome and its instants in order', async () => {
    handler = (s, i) =>
      i === 0 ? { status: 429, json: { ret: 429, msg: 'rate limit', trace: 't' } } : depthEcho(s);
    const records: RequestRecord[] = [];
    const { c } = client({ onRequest: (r) => records.push(r) });
    await c.depth(['EURGBP']);
    expect(records.map((r) => [r.endpoint, r.attempt, r.outcome])).toEqual([
      ['depth-tick', 1, 'QF_RATE_LIMITED'],
      ['depth-tick', 2, 'ok'],
    ]);
    for (const r of records) expect(r.queuedAtMs <= r.sentAtMs && r.sentAtMs <= r.settledAtMs).toBe(true);
    // A throwing listener changes nothing; a call that never left reports nothing.
    const quiet = client({
      onRequest: () => {
        throw new Error('listener');
      },
    });
    expect(await quiet.c.depth(['EURGBP'])).toHaveLength(1);
    const aborted = client({ onRequest: (r) => records.push(r) });
    await failure(aborted.c.depth(['EURGBP'], { signal: AbortSignal.abort() }));
    expect(records).toHaveLength(2);
  });

  it('times out a request that never answers and retries it', async () => {
    handler = (s, i) => (i === 0 ? 'hang' : depthEcho(s));
    const { c } = client({ timeouts: { requestMs: 100 } });
    expect(await c.depth(['EURGBP'])).toHaveLength(1);
    expect(seen).toHaveLength(2);
  });

  it('raises QF_TIMEOUT when every attempt times out', async () => {
    handler = () => 'hang';
    const { c } = client({ timeouts: { requestMs: 50 }, retry: { maxAttempts: 2, baseDelayMs: 1 } });
    expect(await failure(c.depth(['EURGBP']))).toMatchObject({
      code: 'QF_TIMEOUT',
      name: 'RequestTimeoutError',
      attempts: 2,
    });
  });

  it.each([
    [400, 'QF_BAD_REQUEST'],
    [401, 'QF_UNAUTHORIZED_TOKEN'],
    [600, 'QF_INVALID_CODE'],
    [601, 'QF_BODY_EMPTY'],
    [604, 'QF_UNAUTHORIZED_CODE'],
    [605, 'QF_TOO_MANY_PRODUCTS'],
  ])('never retries ret %i (%s), with HTTP 200 or the same HTTP status', async (ret, code) => {
    for (const status of [200, ret < 600 ? ret : 400]) {
      seen.length = 0;
      handler = () => ({ status, json: { ret, msg: 'refused', trace: 'server-trace' } });
      const { c } = client();
      const err = await failure(c.depth(['EURGBP']));
      expect(err).toMatchObject({ code, ret, retryable: false, attempts: 1, trace: 'server-trace' });
      expect(seen).toHaveLength(1);
    }
  });
});

describe('QuoteflowClient missing items', () => {
  it('asks again for a code the response left out, and only for that one', async () => {
    handler = (s, i) => {
      const codes = (s.json!.data['symbol_list'] as { code: string }[]).map((x) => x.code);
      return ok({ tick_list: (i === 0 ? codes.slice(1) : codes).map((code) => tick(code)) });
    };
    const { c } = client();
    const ticks = await c.depth(['EURGBP', 'GOLD', 'USOIL']);
    expect(ticks.map((t) => t.code)).toEqual(['EURGBP', 'GOLD', 'USOIL']);
    expect(seen.map((s) => (s.json!.data['symbol_list'] as { code: string }[]).map((x) => x.code))).toEqual([
      ['EURGBP', 'GOLD', 'USOIL'],
      ['EURGBP'],
    ]);
  });

  it('reports groups still missing after the bounded retries, with what did arrive', async () => {
    handler = (s) => {
      const groups = (s.json!.data['data_list'] as { code: string; kline_type: number }[]).filter(
        (g) => g.code !== 'GOLD',
      );
      return ok({
        kline_list: groups.map((g) => ({
          code: g.code,
          kline_type: g.kline_type,
          kline_data: [bar(1_700_000_000)],
        })),
      });
    };
    const { c } = client({ retry: { missingRetries: 2, baseDelayMs: 1 } });
    const err = (await failure(
      c.batchKline([
        { code: 'BTCUSDT', klineType: 1 },
        { code: 'GOLD', klineType: 1 },
      ]),
    )) as MissingItemsError;
    expect(err).toBeInstanceOf(MissingItemsError);
    expect(err).toMatchObject({
      code: 'QF_MISSING_ITEMS',
      missing: ['GOLD:1'],
      attempts: 3,
      retryable: false,
    });
    expect(err.partial).toHaveLength(1);
    expect(seen).toHaveLength(3);
  });

  it('treats a /kline answer for another code as missing', async () => {
    handler = () => ok({ code: 'ETHUSDT', kline_type: 1, kline_list: [bar(1_700_000_000)] });
    const { c } = client({ retry: { missingRetries: 1, baseDelayMs: 1 } });
    expect(await failure(c.kline({ code: 'BTCUSDT', klineType: 1, count: 1 }))).toMatchObject({
      code: 'QF_MISSING_ITEMS',
      missing: ['BTCUSDT'],
    });
  });
});

describe('QuoteflowClient never leaks the token', () => {
  function expectNoToken(err: unknown) {
    const texts: string[] = [String(err), JSON.stringify(err), (err as Error).stack ?? ''];
    for (let e: unknown = err; e instanceof Error; e = e.cause) {
      texts.push(e.message, String(e), JSON.stringify(e), e.stack ?? '');
      for (const value of Object.values(e))
        texts.push(
          typeof value === 'string'
            ? value
            : (JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) ?? ''),
        );
    }
    for (const text of texts) expect(text).not.toContain(TOKEN);
  }

  it.each([
    ['a refused connection', { baseUrl: 'http://127.0.0.1:1' }, () => ({ status: 200 })],
    ['a dropped connection', {}, () => 'destroy' as const],
    ['a timeout', { timeouts: { requestMs: 30 } }, () => 'hang' as const],
    ['ret 401', {}, () => ({ json: { ret: 401, msg: 'token invalid', trace: 't' } })],
    [
      'an HTTP 500 echoing the URL',
      {},
      (s: Seen) => ({ status: 500, text: `failed: /x?token=${s.params.get('token')}&query=1` }),
    ],
    ['a malformed body echoing the token', {}, () => ({ status: 200, text: `token=${TOKEN}` })],
  ])(
    'keeps it out of the message, String(), JSON, stack and cause chain on %s',
    async (_name, options, reply) => {
      handler = reply as typeof handler;
      const { c } = client({ ...options, retry: { maxAttempts: 2, baseDelayMs: 1 } });
      const err = await failure(c.depth(['EURGBP']));
      expect(err).toBeInstanceOf(QuoteflowError);
      expectNoToken(err);
    },
  );

  it('keeps it out of option errors', () => {
    expect(
      () => new QuoteflowClient({ baseUrl: `http://h/?token=${TOKEN}`, token: TOKEN, plan: 'free' }),
    ).toThrowError(expect.not.objectContaining({ message: expect.stringContaining(TOKEN) }));
    expect(() => new QuoteflowClient({ baseUrl: 'http://h', token: TOKEN, plan: 'gold' as never })).toThrow(
      /"plan" must be one of/,
    );
    expect(() => new QuoteflowClient({ baseUrl: 'http://h', token: '', plan: 'free' })).toThrow(/"token"/);
    expect(() => new QuoteflowClient({ baseUrl: 'ftp://h', token: TOKEN, plan: 'free' })).toThrow(
      /"baseUrl"/,
    );
    expect(
      () =>
        new QuoteflowClient({ baseUrl: 'http://h', token: TOKEN, plan: 'free', timeouts: { requestMs: 0 } }),
    ).toThrow(/timeouts.requestMs/);
  });
});

describe('QuoteflowClient cancellation and lifecycle', () => {
  it('aborts the request in flight and rejects with QF_ABORTED', async () => {
    handler = () => 'hang';
    const { c } = client();
    const controller = new AbortController();
    const p = c.depth(['EURGBP'], { signal: controller.signal });
    // In flight: the server has it (and never answers).
    await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: 10_000, interval: 5 });
    controller.abort();
    const err = await failure(p);
    expect(err).toBeInstanceOf(AbortedError);
    expect(err.retryable).toBe(false);
    expect(seen).toHaveLength(1);
  });

  it('sends nothing for an already-aborted signal', async () => {
    handler = depthEcho;
    const { c } = client();
    expect(await failure(c.depth(['EURGBP'], { signal: AbortSignal.abort() }))).toMatchObject({
      code: 'QF_ABORTED',
    });
    expect(seen).toHaveLength(0);
  });

  it('closes idempotently and refuses calls afterwards', async () => {
    handler = depthEcho;
    const { c } = client();
    await c.depth(['EURGBP']);
    await c.close();
    await c.close();
    expect(await failure(c.depth(['EURGBP']))).toBeInstanceOf(ClientClosedError);
  });

  it('decodes suspensions with the longer timeout and the suspension endpoint', async () => {
    handler = () => ({
      json: {
        success: true,
        timestamp: '2026-11-20T00:00:00',
        totalCount: 1,
        data: [{ symbol: 'X', publishDate: '2026-11-19 10:00:00' }],
      },
    });
    const { c, scheduled } = client();
    const records = await c.suspensions('nyse');
    expect(records[0]).toMatchObject({
      symbol: 'X',
      exchange: 'nyse',
      publishAtMs: Date.UTC(2026, 10, 19, 15),
    });
    expect(seen[0]!.path).toBe('/api/suspension/nyse');
    expect(seen[0]!.params.get('token')).toBe(TOKEN);
    expect(scheduled[0]!.endpoint).toBe('suspension');
  });

  it('uses the process-wide scheduler of the token when none is injected', async () => {
    handler = depthEcho;
    const c = new QuoteflowClient({ baseUrl, token: TOKEN, plan: 'professional' });
    const d = new QuoteflowClient({ baseUrl, token: TOKEN, plan: 'professional' });
    clients.push(c, d);
    // The token's one scheduler of the system clock, the same for every client of the token.
    const shared = sharedSchedulerFor(TOKEN, planLimits('professional'));
    expect(c.scheduler).toBe(shared);
    expect(d.scheduler).toBe(shared);
    // …and the requests go through it.
    const before = shared.stats().startedPerEndpoint['depth-tick'] ?? 0;
    expect(await c.depth(['EURGBP'])).toHaveLength(1);
    expect(await d.depth(['EURGBP'])).toHaveLength(1);
    expect(shared.stats().startedPerEndpoint['depth-tick']).toBe(before + 2);
  });
});

describe('QuoteflowClient clock', () => {
  const T0 = Date.UTC(2026, 0, 5, 14, 30);
  const klineAnswer = () =>
    ok({ code: 'BTCUSDT', kline_type: 1, kline_list: [bar(1_700_000_000), bar(1_700_000_060)] });
  /** A clock whose time the test sets by hand; its timers are the real ones. */
  const stubClock = (startMs: number) => {
    const state = { nowMs: startMs };
    const clock: Clock = { ...systemClock, now: () => state.nowMs };
    return { clock, state };
  };
  /** Waits (real time) until the server has seen `n` requests. */
  const seenCount = async (n: number) => {
    for (let i = 0; i < 200 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    expect(seen).toHaveLength(n);
  };

  it('stamps readAtMs when the scheduler lets the request go and receivedAtMs after the answer', async () => {
    const { clock, state } = stubClock(T0);
    const queuedAt: number[] = [];
    const scheduler: RequestScheduler = {
      schedule: (_request, send) => {
        queuedAt.push(clock.now());
        state.nowMs += 500; // the request waits in the scheduler's queue
        return send();
      },
      reportRateLimited: () => {},
    };
    handler = (s) => {
      state.nowMs += 250; // the service takes its time
      return s.method === 'POST' ? batchEcho(s) : klineAnswer();
    };
    const { c } = client({ clock, scheduler });
    expect(c.clock).toBe(clock);
    const bars = await c.kline({ code: 'BTCUSDT', klineType: 1, count: 2 });
    expect(queuedAt).toEqual([T0]);
    expect(bars).toHaveLength(2);
    for (const b of bars) expect(b).toMatchObject({ readAtMs: T0 + 500, receivedAtMs: T0 + 750 });
    const groups = await c.batchKline([
      { code: 'BTCUSDT', klineType: 1 },
      { code: 'ETHUSDT', klineType: 1 },
    ]);
    for (const b of groups.flatMap((g) => g.bars))
      expect(b).toMatchObject({ readAtMs: T0 + 1_250, receivedAtMs: T0 + 1_500 });
  });

  it('hands out strictly increasing receivedAtMs per client even when the clock stands still', async () => {
    const { clock } = stubClock(T0);
    handler = (s) => (s.method === 'POST' ? batchEcho(s) : klineAnswer());
    const { c } = client({ clock, plan: 'free', limitOverrides: { batchKlineGroups: 2 } });
    const a = await c.kline({ code: 'BTCUSDT', klineType: 1, count: 2 });
    const b = await c.kline({ code: 'BTCUSDT', klineType: 1, count: 2 });
    // Five groups at two per request: three answers, each with its own instant.
    const groups = await c.batchKline(
      ['A', 'B', 'C', 'D', 'E'].map((x) => ({ code: `${x}USDT`, klineType: 1 as const })),
    );
    expect(a.map((x) => x.receivedAtMs)).toEqual([T0, T0]);
    expect(b.map((x) => x.receivedAtMs)).toEqual([T0 + 1, T0 + 1]);
    const perGroup = groups.map((g) => new Set(g.bars.map((x) => x.receivedAtMs)));
    expect(perGroup.every((set) => set.size === 1)).toBe(true);
    const answers = new Set(groups.flatMap((g) => g.bars.map((x) => x.receivedAtMs)));
    expect([...answers].sort((x, y) => x - y)).toEqual([T0 + 2, T0 + 3, T0 + 4]);
    expect([...a, ...b, ...groups.flatMap((g) => g.bars)].every((x) => x.readAtMs === T0)).toBe(true);
    // Another client keeps its own sequence.
    const { c: other } = client({ clock });
    expect((await other.kline({ code: 'BTCUSDT', klineType: 1, count: 1 }))[0]!.receivedAtMs).toBe(T0);
  });

  it('waits the retry backoff on the injected clock: nothing is sent again until it advances', async () => {
    const clock = new ManualClock(T0);
    handler = (_s, i) => (i === 0 ? { status: 502, text: 'bad gateway' } : klineAnswer());
    const { c } = client({
      clock,
      retry: { maxAttempts: 3, baseDelayMs: 40, maxDelayMs: 40, random: () => 0.5 }, // 20 ms
    });
    const bars = c.kline({ code: 'BTCUSDT', klineType: 1, count: 2 });
    await seenCount(1);
    await new Promise((r) => setTimeout(r, 100)); // five times the delay passes in real time
    expect(seen).toHaveLength(1);
    await clock.advance(19);
    expect(seen).toHaveLength(1);
    await clock.advance(1);
    const result = await bars;
    expect(seen).toHaveLength(2);
    expect(result[0]).toMatchObject({ readAtMs: T0 + 20, receivedAtMs: T0 + 20 });
  });

  it('keeps the network timeout on real time, whatever the clock', async () => {
    handler = () => 'hang';
    const { c } = client({
      clock: new ManualClock(T0), // never advanced
      timeouts: { requestMs: 50 },
      retry: { maxAttempts: 1 },
    });
    expect(await failure(c.kline({ code: 'BTCUSDT', klineType: 1, count: 1 }))).toMatchObject({
      code: 'QF_TIMEOUT',
    });
  });

  it('builds its default scheduler on its clock, never shared with a client on another clock', async () => {
    const token = 'clock-keyed-token';
    const make = (clock?: Clock) => {
      const c = new QuoteflowClient({
        baseUrl,
        token,
        plan: 'basic',
        ...(clock === undefined ? {} : { clock }),
      });
      clients.push(c);
      return c;
    };
    const manual = new ManualClock(T0);
    const onSystem = make();
    const onManual = make(manual);
    expect(onSystem.clock).toBe(systemClock);
    expect(onManual.scheduler).not.toBe(onSystem.scheduler);
    expect(make(manual).scheduler).toBe(onManual.scheduler);
    expect(make(systemClock).scheduler).toBe(onSystem.scheduler);
    expect((onManual.scheduler as PlanScheduler).stats().atMs).toBe(T0);
    await (onManual.scheduler as PlanScheduler).close();
    await (onSystem.scheduler as PlanScheduler).close();
  });

  it('refuses a clock without the Clock methods', () => {
    expect(
      () => new QuoteflowClient({ baseUrl, token: TOKEN, plan: 'free', clock: { now: () => 0 } as never }),
    ).toThrow(/"clock" must have now\(\), setTimeout\(\) and clearTimeout\(\)/);
  });
});
