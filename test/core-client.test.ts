import type { QuoteflowError } from '@quoteflow/core';
import {
  QuoteflowClient,
  klineHistory,
  pollDepth,
  pollLatestBars,
  toAsyncIterable,
  type Bar,
  type GapMarker,
} from '@quoteflow/core';
import {
  AbortedError,
  InvalidCodeError,
  UnauthorizedCodeError,
  UnauthorizedTokenError,
} from '@quoteflow/core/internal';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { lastValueFrom, take, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// Cross-package: the real client, the real plan scheduler and the simulator over real sockets on 127.0.0.1.
const PRO = 'core-it-pro-5d1e';
const HK_ONLY = 'core-it-hk-77a0';
// Faults get their own token: a 429 slows the token's shared scheduler down for a while (by design).
const FAULTS = 'core-it-faults-3b9c';
// Suspensions get their own token too: one query a minute, slower still while a token recovers from a 429.
const SUSPENSIONS = 'core-it-susp-c41f';
let sim: Simulator;
const clients: QuoteflowClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    seed: 7,
    tokens: {
      [PRO]: 'professional',
      [HK_ONLY]: 'all-hk',
      [FAULTS]: 'professional',
      [SUSPENSIONS]: 'professional',
    },
  });
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  sim.setFaults([]);
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(token = PRO, extra: Partial<ConstructorParameters<typeof QuoteflowClient>[0]> = {}) {
  const plan = token === HK_ONLY ? 'all-hk' : 'professional';
  if (token === FAULTS) extra = { timeouts: { requestMs: 2_000 }, ...extra };
  const c = new QuoteflowClient({
    baseUrl: sim.url,
    token,
    plan,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...extra,
  });
  clients.push(c);
  return c;
}

function tokenFree(err: unknown) {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    for (const text of [e.message, String(e), JSON.stringify(e), e.stack ?? '']) {
      expect(text).not.toContain(PRO);
      expect(text).not.toContain(HK_ONLY);
    }
  }
}

async function failure(p: Promise<unknown>): Promise<QuoteflowError> {
  try {
    await p;
  } catch (err) {
    return err as QuoteflowError;
  }
  throw new Error('expected a rejection');
}

describe('client against the simulator', () => {
  it('answers a mixed depth batch for every code, split by family and to codes per request', async () => {
    const since = Date.now();
    const codes = ['AAPL.US', '700.HK', 'BTCUSDT', 'EURGBP', 'GOLD', 'US500', '600416.SH'];
    const ticks = await client(PRO, { limitOverrides: { codesPerRequest: 2 } }).depth(codes);
    expect(ticks.map((t) => t.code)).toEqual(codes);
    for (const t of ticks) {
      expect(typeof t.seq).toBe('bigint');
      expect(t.tickTimeMs).toBeGreaterThan(0);
    }
    const log = sim.log.filter({ endpoint: 'depth-tick', sinceMs: since });
    expect(log.every((e) => e.codes <= 2 && e.ret === 200)).toBe(true);
    expect(new Set(log.map((e) => e.family))).toEqual(new Set(['stock', 'general']));
    expect(log).toHaveLength(2 + 2); // stock: 3 codes → 2 requests; general: 4 codes → 2 requests
  });

  it('fetches the latest 2 bars of every group across both families in one batch per family', async () => {
    const since = Date.now();
    const groups = [
      { code: 'AAPL.US', klineType: 1 },
      { code: 'AAPL.US', klineType: 8 },
      { code: 'BTCUSDT', klineType: 1 },
      { code: 'EURGBP', klineType: 5 },
    ] as const;
    const res = await client().batchKline(groups);
    expect(res.map((r) => [r.code, r.klineType])).toEqual(groups.map((g) => [g.code, g.klineType]));
    for (const r of res) {
      expect(r.bars.length).toBeGreaterThan(0);
      expect(r.bars.length).toBeLessThanOrEqual(2);
    }
    const log = sim.log.filter({ endpoint: 'batch-kline', sinceMs: since, ret: 200 });
    expect(log.map((e) => [e.method, e.family, e.groups]).sort()).toEqual([
      ['POST', 'general', 2],
      ['POST', 'stock', 2],
    ]);
  });

  it('pages crypto history backwards to N contiguous bars, oldest first', async () => {
    const since = Date.now();
    const out = (await lastValueFrom(
      klineHistory(client(), { code: 'BTCUSDT', klineType: 1, bars: 1_200 }).pipe(toArray<Bar | GapMarker>()),
    )) as Bar[];
    expect(out).toHaveLength(1_200);
    expect(out.every((b) => b.type === 'bar')).toBe(true);
    for (let i = 1; i < out.length; i++) expect(out[i]!.tsMs - out[i - 1]!.tsMs).toBe(60_000);
    expect(sim.log.filter({ endpoint: 'kline', sinceMs: since })).toHaveLength(3);
  });

  it('says so when a stock code cannot reach back N bars', async () => {
    const out = await lastValueFrom(
      klineHistory(client(), { code: 'AAPL.US', klineType: 1, bars: 800 }).pipe(toArray()),
    );
    expect(out[0]).toMatchObject({ type: 'gap', code: 'AAPL.US' });
    expect((out[0] as GapMarker).reason).toMatch(/cannot page backwards/);
    expect(out.slice(1)).toHaveLength(500);
  });

  it('sorts and dedupes newest-first repeated bars and maps an empty first volume to null', async () => {
    sim.addFault({ kind: 'kline-newest-first-repeated', endpoint: 'kline', times: 1 });
    const bars = await client().kline({ code: 'ETHUSDT', klineType: 1, count: 50 });
    expect(bars).toHaveLength(50);
    for (let i = 1; i < bars.length; i++) expect(bars[i]!.tsMs).toBeGreaterThan(bars[i - 1]!.tsMs);
    sim.addFault({ kind: 'kline-empty-first-volume', endpoint: 'kline', times: 1 });
    const withGap = await client().kline({ code: 'ETHUSDT', klineType: 1, count: 5 });
    expect(withGap.some((b) => b.volume === null && b.turnover === null)).toBe(true);
    expect(withGap.every((b) => !Number.isNaN(b.volume))).toBe(true);
  });

  it.each(['http-5xx', 'malformed-json', 'truncated', 'drop', 'rate-limit'] as const)(
    'retries through a %s fault and succeeds',
    async (kind) => {
      const since = Date.now();
      sim.addFault({ kind, endpoint: 'depth-tick', times: 2 });
      const ticks = await client(FAULTS).depth(['BTCUSDT']);
      expect(ticks[0]!.code).toBe('BTCUSDT');
      const log = sim.log.filter({ endpoint: 'depth-tick', sinceMs: since });
      expect(log).toHaveLength(3);
      expect(log.filter((e) => e.faults.includes(kind))).toHaveLength(2);
      expect(log.at(-1)!.ret).toBe(200);
    },
  );

  it('refuses an unknown token once, without retrying or leaking it', async () => {
    const since = Date.now();
    const err = await failure(
      new QuoteflowClient({ baseUrl: sim.url, token: `${PRO}-wrong`, plan: 'professional' }).depth([
        'BTCUSDT',
      ]),
    );
    expect(err).toBeInstanceOf(UnauthorizedTokenError);
    expect(sim.log.filter({ endpoint: 'depth-tick', sinceMs: since })).toHaveLength(1);
    tokenFree(err);
  });

  it('reports an unknown code (600) and a code outside the plan (604) as typed errors', async () => {
    expect(await failure(client().depth(['NOPE.US']))).toBeInstanceOf(InvalidCodeError);
    const err = await failure(client(HK_ONLY).depth(['AAPL.US']));
    expect(err).toBeInstanceOf(UnauthorizedCodeError);
    tokenFree(err);
  });

  it('decodes suspensions and static info', async () => {
    const c = client(SUSPENSIONS);
    const records = await c.suspensions('sse');
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.exchange === 'sse' && Number.isFinite(r.publishAtMs))).toBe(true);
    const info = await c.staticInfo(['700.HK', 'AAPL.US']);
    expect(info.map((i) => i.code)).toEqual(['700.HK', 'AAPL.US']);
    // Each code's lot size as the simulator's catalogue has it (a decimal string, as sent).
    expect(info.map((i) => i.lotSize)).toEqual(
      ['700.HK', 'AAPL.US'].map((code) => sim.market.product(code)!.staticInfo!['lot_size']),
    );
    expect(info[1]!.lotSize).toBe('1');
  });

  it('aborts a slow request in flight', async () => {
    sim.addFault({ kind: 'latency', endpoint: 'depth-tick', latencyMs: 3_000, times: 1 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    expect(await failure(client().depth(['BTCUSDT'], { signal: controller.signal }))).toBeInstanceOf(
      AbortedError,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('polls depth and latest bars through the shared scheduler without a single rate-limit refusal', async () => {
    const since = Date.now();
    const c = client();
    const iterable = toAsyncIterable(pollDepth(c, { codes: ['BTCUSDT', 'AAPL.US'], intervalMs: 100 }));
    let n = 0;
    for await (const tick of iterable) {
      expect(['BTCUSDT', 'AAPL.US']).toContain(tick.code);
      if (++n === 8) break;
    }
    const bars = await lastValueFrom(
      pollLatestBars(c, { groups: [{ code: 'BTCUSDT', klineType: 1 }] }).pipe(take(4), toArray()),
    );
    expect(bars.every((b) => b.code === 'BTCUSDT')).toBe(true);
    const log = sim.log.filter({ sinceMs: since });
    // 8 ticks = 4 polls of 2 requests each (one per family).
    expect(log.filter((e) => e.endpoint === 'depth-tick')).toHaveLength(8);
    expect(log.filter((e) => e.ret === 429)).toHaveLength(0);
  });
});
