import { PLANS, calendarOf, planLimits, type KlineType } from '@quoteflow/core';
import {
  BadRequestError,
  InvalidCodeError,
  RateLimitedError,
  TooManyProductsError,
  UnauthorizedCodeError,
  UnauthorizedTokenError,
  barPeriodAt,
  buildBatchKlineRequest,
  buildDepthTickRequest,
  buildKlineRequest,
  buildStaticInfoRequest,
  buildSuspensionRequest,
  canPageBackwards,
  classifyCode,
  decodeBatchKlineData,
  decodeDepthTickData,
  decodeKlineData,
  decodeStaticInfoData,
  decodeSuspensionResponse,
  familyOf,
  interpretRetResponse,
  type RequestSpec,
} from '@quoteflow/core/internal';
import { defaultCatalogue, startSimulator, type Simulator } from '@quoteflow/simulator';
import { simPlanLimits } from '@quoteflow/simulator/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Cross-check: what the simulator serves validates against the client's own schemas and decoders,
// and the two packages (which share no code on purpose) agree on limits, families and bar alignment.
const T = Date.parse('2026-11-17T15:00:00Z'); // Tuesday, 10:00 New York (US session open)
const TOKEN = 'conformance-9f2c';
const products = defaultCatalogue();
let sim: Simulator;
let traceN = 0;
const trace = () => `conf-${++traceN}`;
/** When a request left and its answer arrived: the frozen market's instant (no client clock here). */
const stamps = { readAtMs: T, receivedAtMs: T };

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    seed: 11,
    clock: { now: () => T }, // a frozen market: no bar closes between two calls of one test
    rateLimits: false,
    tokens: { [TOKEN]: 'professional', 'conf-hk': 'all-hk', 'conf-free': 'free' },
  });
});
afterAll(() => sim.close());

async function send(spec: RequestSpec, token = TOKEN): Promise<{ status: number; text: string }> {
  const qs = new URLSearchParams({ token, ...spec.query });
  const res = await fetch(`${sim.url}${spec.path}?${qs}`, {
    method: spec.method,
    headers: {
      accept: 'application/json',
      ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(spec.body === undefined ? {} : { body: spec.body }),
  });
  return { status: res.status, text: await res.text() };
}

async function call(spec: RequestSpec, token = TOKEN): Promise<unknown> {
  return interpretRetResponse(spec.endpoint, await send(spec, token), spec.trace, spec.asked).data;
}

describe('simulator ↔ client conformance', () => {
  it('agrees with core on families, product classes and which classes page backwards', () => {
    for (const p of products) {
      expect(familyOf(p.code), p.code).toBe(p.family);
      if (p.productClass !== 'index') expect(classifyCode(p.code), p.code).toBe(p.productClass);
      if (p.family === 'general')
        expect(canPageBackwards(classifyCode(p.code)), p.code).toBe(
          ['forex', 'metal', 'crypto'].includes(p.productClass),
        );
    }
  });

  it('enforces the same limit table as core for every plan', () => {
    for (const plan of PLANS) {
      const core = planLimits(plan);
      const simL = simPlanLimits(plan);
      const rules = (r: readonly { id: string; scope: string; windowMs: number; limit: number }[]) =>
        r
          .map(({ id, scope, windowMs, limit }) => ({ id, scope, windowMs, limit }))
          .sort((a, b) => a.id.localeCompare(b.id));
      expect(rules(simL.rules), plan).toEqual(rules(core.rules));
      expect(simL.perDay, plan).toBe(core.perDay);
      expect(simL.batchKlineGroups, plan).toBe(core.batchKlineGroups);
      expect(simL.codesPerRequest, plan).toBe(core.codesPerRequest);
    }
  });

  it('/kline bars of every class and type decode and sit on core’s bar periods', async () => {
    const sample = [
      'AAPL.US',
      '700.HK',
      '600416.SH',
      '000627.SZ',
      'DJI.US',
      'HSI.HK',
      'BTCUSDT',
      'EURGBP',
      'Silver',
      'USOIL',
      'NAS100',
      'CORN',
    ];
    for (const code of sample) {
      const family = familyOf(code);
      for (const klineType of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as KlineType[]) {
        if (family === 'stock' && (klineType === 6 || klineType === 7)) continue;
        const result = decodeKlineData(
          await call(buildKlineRequest({ code, klineType, count: 12 }, family, trace())),
          stamps,
        );
        expect(result.code).toBe(code);
        expect(result.bars.length, `${code} ${klineType}`).toBeGreaterThan(0);
        for (const bar of result.bars) {
          expect(
            barPeriodAt(bar.tsMs, klineType, calendarOf(code))?.startMs,
            `${code} ${klineType} ${new Date(bar.tsMs).toISOString()}`,
          ).toBe(bar.tsMs);
          expect(Number.isFinite(bar.open) && Number.isFinite(bar.close) && bar.volume !== null).toBe(true);
        }
      }
    }
  });

  it('pages crypto, forex and metals backwards with core’s kline_timestamp_end', async () => {
    for (const code of ['ETHUSDT', 'AUDUSD', 'GOLD']) {
      const latest = decodeKlineData(
        await call(buildKlineRequest({ code, klineType: 1, count: 5 }, 'general', trace())),
        stamps,
      );
      const oldest = latest.bars[0]!.tsMs;
      const page = decodeKlineData(
        await call(
          buildKlineRequest({ code, klineType: 1, count: 5, endMs: oldest - 60_000 }, 'general', trace()),
        ),
        stamps,
      );
      expect(page.bars.map((b) => b.tsMs)).toEqual([5, 4, 3, 2, 1].map((k) => oldest - k * 60_000));
    }
  });

  it('/batch-kline decodes for both families', async () => {
    const stock = decodeBatchKlineData(
      await call(
        buildBatchKlineRequest(
          [
            { code: 'AAPL.US', klineType: 1 },
            { code: '700.HK', klineType: 8 },
            { code: '600416.SH', klineType: 10 },
          ],
          'stock',
          trace(),
          500,
        ),
      ),
      stamps,
    );
    const general = decodeBatchKlineData(
      await call(
        buildBatchKlineRequest(
          [
            { code: 'BTCUSDT', klineType: 7 },
            { code: 'US30', klineType: 2 },
            { code: 'UKOIL', klineType: 9 },
          ],
          'general',
          trace(),
          500,
        ),
      ),
      stamps,
    );
    for (const g of [...stock, ...general]) {
      expect(g.bars.length, g.code).toBeGreaterThan(0);
      expect(g.bars.length).toBeLessThanOrEqual(2);
      for (const bar of g.bars)
        expect(barPeriodAt(bar.tsMs, g.klineType, calendarOf(g.code))?.startMs).toBe(bar.tsMs);
    }
  });

  it('/depth-tick decodes for every product of the catalogue', async () => {
    for (const family of ['stock', 'general'] as const) {
      const codes = products.filter((p) => p.family === family).map((p) => p.code);
      for (let i = 0; i < codes.length; i += 50) {
        const chunk = codes.slice(i, i + 50);
        const ticks = decodeDepthTickData(await call(buildDepthTickRequest(chunk, family, trace(), 50)));
        expect(ticks.map((t) => t.code)).toEqual(chunk);
        for (const t of ticks) {
          expect(typeof t.seq).toBe('bigint');
          for (const l of [...t.bids, ...t.asks]) expect(Number.isFinite(l.price)).toBe(true);
        }
      }
    }
  });

  it('/static_info decodes for every stock-family product', async () => {
    const codes = products.filter((p) => p.family === 'stock').map((p) => p.code);
    const infos = decodeStaticInfoData(await call(buildStaticInfoRequest(codes, trace(), 50)));
    expect(infos.map((i) => i.code)).toEqual(codes);
  });

  it('suspension responses decode for the three exchanges', async () => {
    for (const exchange of ['sse', 'nyse', 'nasdaq'] as const) {
      const { status, text } = await send(buildSuspensionRequest({ exchange }));
      const records = decodeSuspensionResponse(exchange, status, text);
      expect(records.length).toBeGreaterThan(100);
      expect(records.every((r) => Number.isFinite(r.publishAtMs))).toBe(true);
    }
  });

  it('failing rets map to core’s typed errors', async () => {
    const kline = (code: string) =>
      buildKlineRequest({ code, klineType: 1, count: 2 }, familyOf(code), trace());
    const fail = async (spec: RequestSpec, token = TOKEN) => {
      try {
        await call(spec, token);
      } catch (err) {
        return err;
      }
      throw new Error('expected a refusal');
    };
    expect(await fail(kline('NOPE.US'))).toBeInstanceOf(InvalidCodeError);
    expect(await fail(kline('AAPL.US'), 'conf-hk')).toBeInstanceOf(UnauthorizedCodeError);
    expect(await fail(kline('AAPL.US'), 'not-a-token')).toBeInstanceOf(UnauthorizedTokenError);
    expect(
      await fail(buildKlineRequest({ code: 'AAPL.US', klineType: 6, count: 2 }, 'stock', trace())),
    ).toBeInstanceOf(BadRequestError);
    const eleven = Array.from({ length: 11 }, (_, i) => ({
      code: 'BTCUSDT',
      klineType: ((i % 10) + 1) as KlineType,
    }));
    expect(await fail(buildBatchKlineRequest(eleven, 'general', trace(), 500), 'conf-free')).toBeInstanceOf(
      TooManyProductsError,
    );
    sim.addFault({ kind: 'rate-limit', times: 1 });
    expect(await fail(kline('BTCUSDT'))).toBeInstanceOf(RateLimitedError);
  });

  it('the known upstream defects decode to the same bars, with a null first volume', async () => {
    const spec = () => buildKlineRequest({ code: 'BTCUSDT', klineType: 3, count: 6 }, 'general', trace());
    const clean = decodeKlineData(await call(spec()), stamps).bars;
    sim.addFault({ kind: 'kline-newest-first-repeated', times: 1 });
    expect(decodeKlineData(await call(spec()), stamps).bars).toEqual(clean);
    sim.addFault({ kind: 'kline-empty-first-volume', times: 1 });
    const empty = decodeKlineData(await call(spec()), stamps).bars;
    expect(empty[0]!.volume).toBeNull();
    expect(empty[0]!.turnover).toBeNull();
  });
});
