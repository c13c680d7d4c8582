/**
 * The answers of the market-data endpoints (`kline`, `batch-kline`, `depth-tick`, `static-info`) to
 * a request already admitted: each checks its data, then answers from the market or refuses.
 */
import type { FaultKind } from '../fault-injector.js';
import type { SimLogEntry } from '../request-log.js';
import { isHaltedBar, type SimHalt } from '../sim-halts.js';
import type { SimMarket } from '../sim-market.js';
import {
  planCovers,
  SIM_MAX_BATCH_BARS,
  SIM_MAX_KLINE_NUM,
  type SimPlan,
  type SimPlanLimits,
} from '../sim-plans.js';
import {
  RET,
  parseDataList,
  parseKlineQuery,
  parseSymbolList,
  type KlineQuery,
  type Refusal,
} from './parse-request.js';
import { applyKlineQuirks, wireBar, wireBook, type CfdDepthVolume } from './wire-format.js';

/** One admitted market-data request and how to answer it. */
export interface MarketDataExchange {
  readonly market: SimMarket;
  readonly halts: readonly SimHalt[];
  readonly cfdDepthVolume: CfdDepthVolume;
  readonly entry: SimLogEntry;
  /** Market time of the request's arrival. */
  readonly nowMs: number;
  readonly family: 'stock' | 'general';
  readonly plan: SimPlan;
  readonly limits: SimPlanLimits;
  /** Whether a fault of this kind was injected into the request. */
  has(kind: FaultKind): boolean;
  fail(refusal: Refusal): Promise<void>;
  ok(payload: unknown): Promise<void>;
}

export function serveMarketData(
  x: MarketDataExchange,
  endpoint: 'kline' | 'batch-kline' | 'depth-tick' | 'static-info',
  data: Record<string, unknown>,
): Promise<void> {
  switch (endpoint) {
    case 'kline':
      return serveKline(x, data);
    case 'batch-kline':
      return serveBatchKline(x, data);
    case 'depth-tick':
    case 'static-info':
      return serveCodes(x, endpoint, data);
  }
}

function serveKline(x: MarketDataExchange, data: Record<string, unknown>): Promise<void> {
  const q = parseKlineQuery(data);
  x.entry.codes = 1;
  if (q === undefined) return x.fail(RET.data);
  x.entry.series = [`${q.code}:${q.klineType}`];
  const refusal = checkCode(x, q.code) ?? checkKlineSemantics(x.market, q);
  if (refusal !== undefined) return x.fail(refusal);
  const list = klineList(x, q, Math.min(q.num, SIM_MAX_KLINE_NUM));
  return x.ok({ code: q.code, kline_type: q.klineType, kline_list: list });
}

function serveBatchKline(x: MarketDataExchange, data: Record<string, unknown>): Promise<void> {
  const groups = parseDataList(data);
  if (!Array.isArray(groups)) return x.fail(groups);
  x.entry.groups = groups.length;
  x.entry.codes = new Set(groups.map((g) => g.code)).size;
  x.entry.series = groups.map((g) => `${g.code}:${g.klineType}`);
  if (groups.length > x.limits.batchKlineGroups) return x.fail(RET.tooMany);
  for (const g of groups) {
    const refusal = checkCode(x, g.code) ?? checkKlineSemantics(x.market, g);
    if (refusal !== undefined) return x.fail(refusal);
  }
  const kline_list = groups.map((g) => ({
    code: g.code,
    kline_type: g.klineType,
    kline_data: klineList(x, g, Math.min(g.num, SIM_MAX_BATCH_BARS)),
  }));
  return x.ok({ kline_list });
}

function serveCodes(
  x: MarketDataExchange,
  endpoint: 'depth-tick' | 'static-info',
  data: Record<string, unknown>,
): Promise<void> {
  const all = parseSymbolList(data);
  if (!Array.isArray(all)) return x.fail(all);
  x.entry.codes = all.length;
  // More codes than the plan allows are cut silently (provider-facts.md).
  const codes = all.slice(0, x.limits.codesPerRequest);
  for (const c of codes) {
    const refusal = checkCode(x, c);
    if (refusal !== undefined) return x.fail(refusal);
  }
  if (endpoint === 'depth-tick') {
    return x.ok({
      tick_list: codes.map((c) =>
        wireBook(c, x.market.book(c, x.nowMs), x.market.product(c)!, x.cfdDepthVolume),
      ),
    });
  }
  return x.ok({
    static_info_list: codes.map((c) => ({ ...(x.market.product(c)!.staticInfo ?? { symbol: c }) })),
  });
}

/** Unknown code and code on the wrong family → 600; plan not covering it → 604. */
function checkCode(x: MarketDataExchange, code: string): Refusal | undefined {
  const p = x.market.product(code);
  if (p === undefined || p.family !== x.family) return RET.codeInvalid;
  if (!planCovers(x.plan, p.market)) return RET.unauthorized;
  return undefined;
}

function checkKlineSemantics(market: SimMarket, q: KlineQuery): Refusal | undefined {
  const p = market.product(q.code)!;
  if (p.family === 'stock' && (q.klineType === 6 || q.klineType === 7)) return RET.data; // not supported for stocks
  if (p.family === 'stock' && q.adjustType !== 0) return RET.data; // "only 0 is currently supported"
  if (q.endTs !== 0) {
    // Only forex, precious metals and crypto accept a timestamp (seconds, as K-line timestamps are).
    if (!(p.productClass === 'forex' || p.productClass === 'metal' || p.productClass === 'crypto'))
      return RET.data;
    if (q.endTs >= 100_000_000_000) return RET.data; // milliseconds, not seconds
  }
  return undefined;
}

function klineList(x: MarketDataExchange, q: KlineQuery, num: number): Record<string, string>[] {
  const p = x.market.product(q.code)!;
  // A halted product trades nothing: its bars in the halt are missing, and the answer reaches
  // further back for as many (up to `num` bars while history lasts), as the provider's would.
  const read = (count: number) =>
    x.market.bars(q.code, q.klineType, x.nowMs, count, q.endTs === 0 ? undefined : q.endTs * 1000);
  let asked = num;
  let all = read(asked);
  let bars = all.filter((b) => !isHaltedBar(x.halts, q.code, b.startMs));
  while (bars.length < num && all.length === asked) {
    asked += num - bars.length;
    all = read(asked);
    bars = all.filter((b) => !isHaltedBar(x.halts, q.code, b.startMs));
  }
  return applyKlineQuirks(
    bars.map((b) => wireBar(b, p)),
    x.has('kline-newest-first-repeated'),
    x.has('kline-empty-first-volume'),
  );
}
