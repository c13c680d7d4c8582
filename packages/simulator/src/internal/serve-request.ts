/**
 * One request to the simulator, from arrival to answer: logged on arrival, admitted (route,
 * method, token, plan limits, injected faults), then answered by its endpoint.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAULT_KINDS, type FaultInjector, type FaultKind, type FaultRule } from '../fault-injector.js';
import type { RequestLog, SimLogEntry } from '../request-log.js';
import { simHaltRecords, type SimHalt } from '../sim-halts.js';
import type { SimMarket } from '../sim-market.js';
import type { SimEndpoint } from '../sim-plans.js';
import { suspensionRecords, type SimExchange } from '../suspension-records.js';
import { tokenLabel } from '../token-label.js';
import { readBody, send, traceOf } from './http-io.js';
import { parseEnvelope, RET, type Refusal } from './parse-request.js';
import { routeOf, type Route } from './route-of.js';
import { serveMarketData } from './serve-market-data.js';
import type { SimTokens, TokenState } from './sim-tokens.js';
import type { CfdDepthVolume } from './wire-format.js';
import { formatWallClock } from './zoned-time.js';

/** What the simulator serves from, and how strictly. */
export interface SimService {
  readonly market: SimMarket;
  readonly faults: FaultInjector;
  readonly halts: readonly SimHalt[];
  readonly log: RequestLog;
  readonly tokens: SimTokens;
  readonly limitMode: 'strict' | 'observe' | 'off';
  readonly failureStatus: 'ok' | 'mirror';
  /** Seed of the suspension records. */
  readonly seed: number;
  readonly cfdDepthVolume: CfdDepthVolume;
  readonly faultHeader: string | false;
  marketNow(): number;
}

type Fail = (r: Refusal, trace: string, injected?: readonly FaultRule[]) => Promise<void>;

export async function serveRequest(
  sim: SimService,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // One clock: the arrival time is the market time (limits, log and bars agree).
  const arrivalMs = sim.marketNow();
  const url = new URL(req.url ?? '/', 'http://sim.invalid');
  const route = routeOf(url.pathname);
  const token = url.searchParams.get('token');
  const ts = token === null ? undefined : sim.tokens.get(token);
  const entry = logArrival(sim.log, req, url, route, token, ts, arrivalMs);
  if (route === undefined) return send(res, entry, 404, { error: 'not found' }, []);
  const wantMethod = route.endpoint === 'batch-kline' ? 'POST' : 'GET';
  if (req.method !== wantMethod)
    return send(res, entry, 405, { error: `method not allowed; use ${wantMethod}` }, []);
  const fail = refuser(sim, res, entry, route.endpoint === 'suspension');
  const body = wantMethod === 'POST' ? await readBody(req) : undefined;
  if (ts === undefined) return fail(RET.token, traceOf(url, body));
  if (!admitByLimits(sim.limitMode, ts, route.endpoint, arrivalMs, entry))
    return fail(RET.rateLimit, traceOf(url, body));
  const injected = [...sim.faults.pick(route.endpoint), ...headerFaults(sim.faultHeader, req)];
  entry.faults = injected.map((f) => f.kind);
  const has = (k: FaultKind) => injected.some((f) => f.kind === k);
  if (has('rate-limit')) return fail(RET.rateLimit, traceOf(url, body), injected);
  if (route.endpoint === 'suspension')
    return send(res, entry, 200, suspensionAnswer(sim, route.family as SimExchange, arrivalMs), injected);
  const env = parseEnvelope(wantMethod === 'POST' ? body : (url.searchParams.get('query') ?? undefined));
  entry.trace = env.trace;
  if (!env.ok) return fail(env.refusal, env.trace, injected);
  const { trace, data } = env.value;
  return serveMarketData(
    {
      market: sim.market,
      halts: sim.halts,
      cfdDepthVolume: sim.cfdDepthVolume,
      entry,
      nowMs: arrivalMs,
      family: route.family as 'stock' | 'general',
      plan: ts.plan,
      limits: ts.limiter.limits,
      has,
      fail: (r) => fail(r, trace, injected),
      ok: (payload) => {
        entry.ret = 200;
        entry.msg = 'ok';
        return send(res, entry, 200, { ret: 200, msg: 'ok', trace, data: payload }, injected);
      },
    },
    route.endpoint,
    data,
  );
}

/** The request's log entry, written as it arrives (the answer fills in the rest). */
function logArrival(
  log: RequestLog,
  req: IncomingMessage,
  url: URL,
  route: Route | undefined,
  token: string | null,
  ts: TokenState | undefined,
  arrivalMs: number,
): SimLogEntry {
  return log.push({
    arrivalMs,
    marketMs: arrivalMs,
    method: req.method ?? 'GET',
    path: url.pathname,
    endpoint: route?.endpoint ?? 'unknown',
    family: route?.family,
    token: token === null ? 'missing' : (ts?.label ?? tokenLabel(token, undefined)),
    plan: ts?.plan,
    codes: 0,
    groups: 0,
    series: [],
    status: 0,
    ret: undefined,
    msg: undefined,
    refusedBy: undefined,
    violated: undefined,
    faults: [],
    trace: undefined,
    done: false,
  });
}

/** Refuses with a failing `ret` (or, on the suspension endpoint, a 500 `success: false`). */
function refuser(sim: SimService, res: ServerResponse, entry: SimLogEntry, suspension: boolean): Fail {
  return (r, trace, injected = []) => {
    entry.ret = r.ret;
    entry.msg = r.msg;
    if (suspension) return send(res, entry, 500, { success: false, error: r.msg }, injected);
    const status =
      sim.failureStatus === 'ok' || r.ret === 200 ? 200 : r.ret === 401 || r.ret === 429 ? r.ret : 400;
    return send(res, entry, status, { ret: r.ret, msg: r.msg, trace }, injected);
  };
}

/** Counts the arrival against the token's limits; false when it must be refused. */
function admitByLimits(
  limitMode: SimService['limitMode'],
  ts: TokenState,
  endpoint: SimEndpoint,
  arrivalMs: number,
  entry: SimLogEntry,
): boolean {
  if (limitMode === 'off') return true;
  const decision = ts.limiter.arrive(endpoint, arrivalMs);
  entry.violated = decision.rule;
  if (!decision.allowed && limitMode === 'strict') {
    entry.refusedBy = decision.rule;
    return false;
  }
  return true;
}

/** Faults named in the request's fault header. */
function headerFaults(faultHeader: string | false, req: IncomingMessage): FaultRule[] {
  if (faultHeader === false) return [];
  const raw = req.headers[faultHeader];
  if (typeof raw !== 'string') return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((k): k is FaultKind => (FAULT_KINDS as readonly string[]).includes(k))
    .map((kind) => ({ kind }));
}

function suspensionAnswer(sim: SimService, exchange: SimExchange, nowMs: number) {
  const data = suspensionRecords(exchange, nowMs, sim.seed, simHaltRecords(sim.halts, exchange, nowMs));
  return {
    success: true,
    timestamp: formatWallClock(nowMs, 'Asia/Shanghai', 'T'),
    totalCount: data.length,
    data,
  };
}
