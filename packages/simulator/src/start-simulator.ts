import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isTimeZone, readBody, send, traceOf } from './internal/http-io.js';
import { routeOf } from './internal/route-of.js';
import { tokenLabel } from './token-label.js';
import type { AddressInfo } from 'node:net';
import { defaultCatalogue, syntheticCatalogue, type SimProduct } from './catalogue.js';
import { FaultInjector, type FaultKind, type FaultRule, FAULT_KINDS } from './fault-injector.js';
import {
  RET,
  parseDataList,
  parseEnvelope,
  parseKlineQuery,
  parseSymbolList,
  type KlineQuery,
  type Refusal,
} from './internal/parse-request.js';
import { applyKlineQuirks, wireBar, wireBook, type CfdDepthVolume } from './internal/wire-format.js';
import { formatWallClock } from './internal/zoned-time.js';
import { RateLimiter } from './rate-limiter.js';
import { RequestLog } from './request-log.js';
import { SimMarket } from './sim-market.js';
import { resolveSimLabelling, type SimLabelling } from './sim-labelling.js';
import {
  planCovers,
  SIM_MAX_BATCH_BARS,
  SIM_MAX_KLINE_NUM,
  SIM_PLANS,
  simPlanLimits,
  type SimPlan,
  type SimPlanOverrides,
} from './sim-plans.js';
import { exchangeOfSimHalt, isHaltedBar, simHaltRecords, type SimHalt } from './sim-halts.js';
import { suspensionRecords, type SimExchange } from './suspension-records.js';

/**
 * The simulator's time source: structurally the same as `@quoteflow/core`'s `Clock`, so one clock
 * object serves both (the simulator reads only `now()`).
 */
export interface SimClock {
  /** Epoch milliseconds. */
  now(): number;
}

/** A token's plan, optionally with limit overrides. */
export interface SimTokenSpec {
  readonly plan: SimPlan;
  readonly overrides?: SimPlanOverrides;
}

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** @defaultValue '127.0.0.1' */
  readonly host?: string;
  /** 0 = a free port. @defaultValue 0 */
  readonly port?: number;
  /** Token → plan. @defaultValue `{ demo: 'professional' }` */
  readonly tokens?: Readonly<Record<string, SimPlan | SimTokenSpec>>;
  /** Seed of the market and of fault probabilities. @defaultValue 1 */
  readonly seed?: number;
  /** Faults for the whole run (see {@link FaultRule}). @defaultValue [] */
  readonly faults?: readonly FaultRule[];
  /**
   * The one clock of the simulator: market time is `clock.now()`, and rate-limit windows, request-log
   * arrival times and daily resets use it too. Pass the clock the client uses (for example core's
   * `acceleratedClock({ speed: 30, startMs })`) so both sides agree on what time it is.
   * @defaultValue `{ now: () => Date.now() }`
   */
  readonly clock?: SimClock;
  /** Days of history before `clock.now()` at start. @defaultValue 800 */
  readonly historyDays?: number;
  /**
   * Which instant a stock bar's `timestamp` names, per axis; missing axes take the default
   * (`session`, `local-midnight`, `calendar`, `calendar`). See {@link SimLabelling} and `SIM_LABELLINGS`.
   * @defaultValue `SIM_DEFAULT_LABELLING`
   */
  readonly labelling?: Partial<SimLabelling>;
  /** Replace the default catalogue. */
  readonly products?: readonly SimProduct[];
  /** Add this many synthetic products (see `syntheticCatalogue`). @defaultValue 0 */
  readonly syntheticProducts?: number;
  /** Whether refused requests count toward the windows (stricter). @defaultValue true */
  readonly countRefused?: boolean;
  /** Zone whose midnight resets daily counts (the provider's, as core's scheduler assumes). @defaultValue 'Asia/Shanghai' */
  readonly dayTimeZone?: string;
  /**
   * `'strict'` refuses what the limits refuse (ret 429, logged with `refusedBy`); `'observe'` serves
   * every request but logs the rule it broke as `violated` (for tests that assert a client never
   * breaks a rule without the refusal changing its flow); `'off'` checks nothing.
   * @defaultValue 'strict'
   */
  readonly limitMode?: 'strict' | 'observe' | 'off';
  /** `false` is the same as `limitMode: 'off'`. @defaultValue true */
  readonly rateLimits?: boolean;
  /** HTTP status of a failing `ret`: `'ok'` = 200 (default), `'mirror'` = 400/401/429 as the ret, 400 for 6xx. */
  readonly failureStatus?: 'ok' | 'mirror';
  /** Base of depth `seq` numbers; `2n ** 53n` puts every seq above JS number precision. @defaultValue 30_000_000n */
  readonly seqBase?: bigint;
  /** CFD depth levels without volume: key omitted, `""` or `"0"`. @defaultValue 'omit' */
  readonly cfdDepthVolume?: CfdDepthVolume;
  /** Header that injects faults into one request (comma-separated kinds), or `false`. @defaultValue 'x-sim-fault' */
  readonly faultHeader?: string | false;
  /**
   * Per simulator calendar (`us`, `hk`, `cn`), local dates (`YYYY-MM-DD`) it trades a regular session
   * although they are holidays: a service that has bars where a market calendar says the exchange
   * was closed (calendars go out of date). @defaultValue {}
   */
  readonly holidayTrading?: Readonly<Partial<Record<'us' | 'hk' | 'cn', readonly string[]>>>;
  /** Halts to serve: in the suspension records of their exchange, and their bars left out of K-line answers. @defaultValue [] */
  readonly halts?: readonly SimHalt[];
}

/** A running simulator. */
export interface Simulator extends AsyncDisposable {
  /** Base URL, `http://HOST:PORT` (no trailing slash). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly log: RequestLog;
  /** The market (bars, books, prices at any market time). */
  readonly market: SimMarket;
  /** Market time now (the `clock` option's `now()`), epoch ms. */
  marketNow(): number;
  /** The stock bar labelling this simulator serves (every axis resolved). */
  readonly labelling: SimLabelling;
  /** Replaces the run's fault rules. */
  setFaults(rules: readonly FaultRule[]): void;
  /** Adds one fault rule (for example `{ kind: 'http-5xx', endpoint: 'kline', times: 3 }`). */
  addFault(rule: FaultRule): void;
  /**
   * The service stops serving `code` (delisted, say): every later request that names it is refused
   * as an unknown code (ret 600), a `/batch-kline` request with it as a whole.
   */
  withdraw(code: string): void;
  /** Adds or replaces a token (with fresh limit windows). */
  setToken(token: string, plan: SimPlan | SimTokenSpec): void;
  /** Forgets every token's arrivals (windows and daily counts), so the next request starts clean. */
  resetLimits(): void;
  /** Stops listening and closes every connection; idempotent. */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  tokens: { demo: 'professional' } as Readonly<Record<string, SimPlan | SimTokenSpec>>,
  seed: 1,
  clock: { now: () => Date.now() } as SimClock,
  historyDays: 800,
  syntheticProducts: 0,
  countRefused: true,
  dayTimeZone: 'Asia/Shanghai',
  rateLimits: true,
  limitMode: 'strict',
  failureStatus: 'ok',
  cfdDepthVolume: 'omit',
  faultHeader: 'x-sim-fault',
} as const;

interface TokenState {
  readonly plan: SimPlan;
  readonly label: string;
  readonly limiter: RateLimiter;
}

function checkOption(ok: boolean, name: string, expected: string, got: unknown): void {
  if (!ok) throw new RangeError(`startSimulator: "${name}" must be ${expected}, got ${JSON.stringify(got)}`);
}

function withDefaults(options: SimulatorOptions) {
  return { ...DEFAULTS, ...options };
}

/** Refuses options a simulator cannot start with, naming the option; returns the limit mode in force. */
/** The products, those of a calendar in `holidayTrading` on a copy of it that trades those dates. */
function withHolidayTrading(
  products: readonly SimProduct[],
  holidayTrading: SimulatorOptions['holidayTrading'],
): SimProduct[] {
  return products.map((p) => {
    const dates = holidayTrading?.[p.calendar.id as 'us' | 'hk' | 'cn'];
    return dates === undefined ? p : { ...p, calendar: { ...p.calendar, tradesOn: dates } };
  });
}

function checkSimulatorOptions(
  o: ReturnType<typeof withDefaults>,
): NonNullable<SimulatorOptions['limitMode']> {
  for (const [id, dates] of Object.entries(o.holidayTrading ?? {}))
    checkOption(
      ['us', 'hk', 'cn'].includes(id) &&
        Array.isArray(dates) &&
        dates.every((d) => typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d)),
      'holidayTrading',
      'per calendar us, hk or cn, a list of YYYY-MM-DD dates',
      o.holidayTrading,
    );
  checkOption(
    Number.isInteger(o.port) && o.port >= 0 && o.port <= 65_535,
    'port',
    'an integer from 0 to 65535',
    o.port,
  );
  checkOption(Number.isInteger(o.seed), 'seed', 'an integer', o.seed);
  checkOption(
    Number.isFinite(o.historyDays) && o.historyDays > 0,
    'historyDays',
    'a positive number of days',
    o.historyDays,
  );
  const limitMode = o.rateLimits === false ? 'off' : o.limitMode;
  checkOption(
    ['strict', 'observe', 'off'].includes(limitMode),
    'limitMode',
    "'strict', 'observe' or 'off'",
    limitMode,
  );
  checkOption(isTimeZone(o.dayTimeZone), 'dayTimeZone', 'an IANA time zone', o.dayTimeZone);
  checkOption(
    ['ok', 'mirror'].includes(o.failureStatus),
    'failureStatus',
    "'ok' or 'mirror'",
    o.failureStatus,
  );
  checkOption(
    ['omit', 'empty', 'zero'].includes(o.cfdDepthVolume),
    'cfdDepthVolume',
    "'omit', 'empty' or 'zero'",
    o.cfdDepthVolume,
  );
  for (const h of o.halts ?? [])
    checkOption(
      exchangeOfSimHalt(h) !== undefined && Number.isFinite(h.fromMs) && h.toMs > h.fromMs,
      'halts',
      'halts of .SH or .US codes (or with an exchange) with fromMs < toMs',
      h,
    );
  checkOption(
    typeof o.tokens === 'object' && o.tokens !== null && !Array.isArray(o.tokens),
    'tokens',
    "an object of token to plan, such as { demo: 'professional' }",
    o.tokens,
  );
  return limitMode;
}

/**
 * Starts a local simulator of the market-data HTTP service on `node:http`.
 * @example
 * const sim = await startSimulator({ port: 0, tokens: { demo: 'professional' }, seed: 7, labelling: { daily: 'utc-midnight' } });
 * const res = await fetch(`${sim.url}/quote-b-api/kline?token=demo&query=${encodeURIComponent(JSON.stringify(q))}`);
 * await sim.close();
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const o = withDefaults(options);
  const limitMode = checkSimulatorOptions(o);
  const clock = o.clock;
  checkOption(
    typeof clock === 'object' && clock !== null && typeof clock.now === 'function',
    'clock',
    'an object with now(): epoch ms',
    clock,
  );
  const startMs = clock.now();
  checkOption(Number.isFinite(startMs), 'clock', 'an object whose now() returns epoch ms', startMs);
  const marketNow = () => Math.floor(clock.now());
  let labelling: SimLabelling;
  try {
    labelling = resolveSimLabelling(o.labelling);
  } catch (err) {
    throw new RangeError(`startSimulator: ${(err as Error).message}`);
  }
  const products = withHolidayTrading(
    [...(o.products ?? defaultCatalogue()), ...syntheticCatalogue({ count: o.syntheticProducts })],
    o.holidayTrading,
  );
  const market = new SimMarket(products, {
    seed: o.seed,
    historyStartMs: startMs - o.historyDays * 86_400_000,
    labelling,
    ...(o.seqBase !== undefined ? { seqBase: o.seqBase } : {}),
  });
  const faults = new FaultInjector(o.faults ?? [], o.seed);
  const halts = o.halts ?? [];
  const log = new RequestLog();
  const tokens = new Map<string, TokenState>();
  const specs = new Map<string, SimPlan | SimTokenSpec>();
  const setToken = (token: string, spec: SimPlan | SimTokenSpec) => {
    specs.set(token, spec);
    const s = typeof spec === 'string' ? { plan: spec } : spec;
    checkOption(
      (SIM_PLANS as readonly string[]).includes(s.plan),
      'tokens',
      `plans from ${SIM_PLANS.join(', ')}`,
      s.plan,
    );
    const limits = simPlanLimits(s.plan, s.overrides);
    tokens.set(token, {
      plan: s.plan,
      label: tokenLabel(token, s.plan),
      limiter: new RateLimiter(limits, { countRefused: o.countRefused, dayTimeZone: o.dayTimeZone }),
    });
  };
  for (const [token, spec] of Object.entries(o.tokens)) setToken(token, spec);

  const failureHttp = (ret: number): number =>
    o.failureStatus === 'ok' || ret === 200 ? 200 : ret === 401 || ret === 429 ? ret : 400;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // One clock: the arrival time is the market time (limits, log and bars agree).
    const arrivalMs = marketNow();
    const mNow = arrivalMs;
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const route = routeOf(url.pathname);
    const token = url.searchParams.get('token');
    const ts = token === null ? undefined : tokens.get(token);
    const entry = log.push({
      arrivalMs,
      marketMs: mNow,
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
    if (route === undefined) return send(res, entry, 404, { error: 'not found' }, []);
    const wantMethod = route.endpoint === 'batch-kline' ? 'POST' : 'GET';
    if (req.method !== wantMethod)
      return send(res, entry, 405, { error: `method not allowed; use ${wantMethod}` }, []);
    const suspension = route.endpoint === 'suspension';
    const fail = (r: Refusal, trace: string, injected: FaultRule[] = []) => {
      entry.ret = r.ret;
      entry.msg = r.msg;
      if (suspension) return send(res, entry, 500, { success: false, error: r.msg }, injected);
      return send(res, entry, failureHttp(r.ret), { ret: r.ret, msg: r.msg, trace }, injected);
    };
    const body = wantMethod === 'POST' ? await readBody(req) : undefined;
    if (ts === undefined) return fail(RET.token, traceOf(url, body));
    if (limitMode !== 'off') {
      const decision = ts.limiter.arrive(route.endpoint, arrivalMs);
      entry.violated = decision.rule;
      if (!decision.allowed && limitMode === 'strict') {
        entry.refusedBy = decision.rule;
        return fail(RET.rateLimit, traceOf(url, body));
      }
    }
    const injected = [...faults.pick(route.endpoint), ...headerFaults(req)];
    entry.faults = injected.map((f) => f.kind);
    const has = (k: FaultKind) => injected.some((f) => f.kind === k);
    if (has('rate-limit')) return fail(RET.rateLimit, traceOf(url, body), injected);

    if (suspension) {
      const exchange = route.family as SimExchange;
      const data = suspensionRecords(exchange, mNow, o.seed, simHaltRecords(halts, exchange, mNow));
      return send(
        res,
        entry,
        200,
        {
          success: true,
          timestamp: formatWallClock(mNow, 'Asia/Shanghai', 'T'),
          totalCount: data.length,
          data,
        },
        injected,
      );
    }
    const env = parseEnvelope(wantMethod === 'POST' ? body : (url.searchParams.get('query') ?? undefined));
    entry.trace = env.trace;
    if (!env.ok) return fail(env.refusal, env.trace, injected);
    const { trace, data } = env.value;
    const family = route.family as 'stock' | 'general';
    // Unknown code and code on the wrong family → 600; plan not covering it → 604.
    const checkCode = (code: string): Refusal | undefined => {
      const p = market.product(code);
      if (p === undefined || p.family !== family) return RET.codeInvalid;
      if (!planCovers(ts.plan, p.market)) return RET.unauthorized;
      return undefined;
    };
    const ok = (payload: unknown) => {
      entry.ret = 200;
      entry.msg = 'ok';
      return send(res, entry, 200, { ret: 200, msg: 'ok', trace, data: payload }, injected);
    };
    const limits = ts.limiter.limits;
    switch (route.endpoint) {
      case 'kline': {
        const q = parseKlineQuery(data);
        entry.codes = 1;
        if (q === undefined) return fail(RET.data, trace, injected);
        entry.series = [`${q.code}:${q.klineType}`];
        const refusal = checkCode(q.code) ?? checkKlineSemantics(q);
        if (refusal !== undefined) return fail(refusal, trace, injected);
        const list = klineList(q, Math.min(q.num, SIM_MAX_KLINE_NUM), mNow, has);
        return ok({ code: q.code, kline_type: q.klineType, kline_list: list });
      }
      case 'batch-kline': {
        const groups = parseDataList(data);
        if (!Array.isArray(groups)) return fail(groups, trace, injected);
        entry.groups = groups.length;
        entry.codes = new Set(groups.map((g) => g.code)).size;
        entry.series = groups.map((g) => `${g.code}:${g.klineType}`);
        if (groups.length > limits.batchKlineGroups) return fail(RET.tooMany, trace, injected);
        for (const g of groups) {
          const refusal = checkCode(g.code) ?? checkKlineSemantics(g);
          if (refusal !== undefined) return fail(refusal, trace, injected);
        }
        const kline_list = groups.map((g) => ({
          code: g.code,
          kline_type: g.klineType,
          kline_data: klineList(g, Math.min(g.num, SIM_MAX_BATCH_BARS), mNow, has),
        }));
        return ok({ kline_list });
      }
      case 'depth-tick':
      case 'static-info': {
        const all = parseSymbolList(data);
        if (!Array.isArray(all)) return fail(all, trace, injected);
        entry.codes = all.length;
        // More codes than the plan allows are cut silently (provider-facts.md).
        const codes = all.slice(0, limits.codesPerRequest);
        for (const c of codes) {
          const refusal = checkCode(c);
          if (refusal !== undefined) return fail(refusal, trace, injected);
        }
        if (route.endpoint === 'depth-tick') {
          return ok({
            tick_list: codes.map((c) =>
              wireBook(c, market.book(c, mNow), market.product(c)!, o.cfdDepthVolume),
            ),
          });
        }
        return ok({
          static_info_list: codes.map((c) => ({ ...(market.product(c)!.staticInfo ?? { symbol: c }) })),
        });
      }
    }
  }

  function checkKlineSemantics(q: KlineQuery): Refusal | undefined {
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

  function klineList(
    q: KlineQuery,
    num: number,
    mNow: number,
    has: (k: FaultKind) => boolean,
  ): Record<string, string>[] {
    const p = market.product(q.code)!;
    // A halted product trades nothing: its bars in the halt are missing, and the answer reaches
    // further back for as many (up to `num` bars while history lasts), as the provider's would.
    const read = (count: number) =>
      market.bars(q.code, q.klineType, mNow, count, q.endTs === 0 ? undefined : q.endTs * 1000);
    let asked = num;
    let all = read(asked);
    let bars = all.filter((b) => !isHaltedBar(halts, q.code, b.startMs));
    while (bars.length < num && all.length === asked) {
      asked += num - bars.length;
      all = read(asked);
      bars = all.filter((b) => !isHaltedBar(halts, q.code, b.startMs));
    }
    return applyKlineQuirks(
      bars.map((b) => wireBar(b, p)),
      has('kline-newest-first-repeated'),
      has('kline-empty-first-volume'),
    );
  }

  function headerFaults(req: IncomingMessage): FaultRule[] {
    if (o.faultHeader === false) return [];
    const raw = req.headers[o.faultHeader];
    if (typeof raw !== 'string') return [];
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((k): k is FaultKind => (FAULT_KINDS as readonly string[]).includes(k))
      .map((kind) => ({ kind }));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: `simulator internal error: ${err instanceof Error ? err.message : String(err)}`,
          }),
        );
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return {
    url: `http://${hostForUrl}:${address.port}`,
    host: address.address,
    port: address.port,
    log,
    market,
    marketNow,
    labelling,
    setFaults: (rules) => faults.set(rules),
    addFault: (rule) => faults.add(rule),
    withdraw: (code) => market.withdraw(code),
    setToken,
    resetLimits: () => specs.forEach((spec, token) => setToken(token, spec)),
    close,
    [Symbol.asyncDispose]: close,
  };
}
