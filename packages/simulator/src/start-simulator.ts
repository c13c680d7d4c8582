import { defaultCatalogue, syntheticCatalogue, type SimProduct } from './catalogue.js';
import { FaultInjector, type FaultRule } from './fault-injector.js';
import { checkOption } from './internal/check-option.js';
import { isTimeZone } from './internal/http-io.js';
import { listenHttp } from './internal/listen-http.js';
import { serveRequest, type SimService } from './internal/serve-request.js';
import { SimTokens } from './internal/sim-tokens.js';
import type { CfdDepthVolume } from './internal/wire-format.js';
import { RequestLog } from './request-log.js';
import { SimMarket } from './sim-market.js';
import { resolveSimLabelling, type SimLabelling } from './sim-labelling.js';
import type { SimPlan, SimPlanOverrides } from './sim-plans.js';
import { exchangeOfSimHalt, type SimHalt } from './sim-halts.js';

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

function withDefaults(options: SimulatorOptions) {
  return { ...DEFAULTS, ...options };
}

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

/** Refuses options a simulator cannot start with, naming the option; returns the limit mode in force. */
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
  const labelling = labellingOf(o.labelling);
  const market = simMarketOf(o, labelling, startMs);
  const faults = new FaultInjector(o.faults ?? [], o.seed);
  const log = new RequestLog();
  const tokens = new SimTokens({ countRefused: o.countRefused, dayTimeZone: o.dayTimeZone });
  for (const [token, spec] of Object.entries(o.tokens)) tokens.set(token, spec);
  const service: SimService = {
    market,
    faults,
    halts: o.halts ?? [],
    log,
    tokens,
    limitMode,
    failureStatus: o.failureStatus,
    seed: o.seed,
    cfdDepthVolume: o.cfdDepthVolume,
    faultHeader: o.faultHeader,
    marketNow,
  };
  const { url, host, port, close } = await listenHttp(
    (req, res) => serveRequest(service, req, res),
    o.port,
    o.host,
  );
  return {
    url,
    host,
    port,
    log,
    market,
    marketNow,
    labelling,
    setFaults: (rules) => faults.set(rules),
    addFault: (rule) => faults.add(rule),
    withdraw: (code) => market.withdraw(code),
    setToken: (token, plan) => tokens.set(token, plan),
    resetLimits: () => tokens.reset(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function labellingOf(labelling: SimulatorOptions['labelling']): SimLabelling {
  try {
    return resolveSimLabelling(labelling);
  } catch (err) {
    throw new RangeError(`startSimulator: ${(err as Error).message}`);
  }
}

/** The market of the catalogue (with synthetic products and holiday trading), with its history. */
function simMarketOf(
  o: ReturnType<typeof withDefaults>,
  labelling: SimLabelling,
  startMs: number,
): SimMarket {
  const products = withHolidayTrading(
    [...(o.products ?? defaultCatalogue()), ...syntheticCatalogue({ count: o.syntheticProducts })],
    o.holidayTrading,
  );
  return new SimMarket(products, {
    seed: o.seed,
    historyStartMs: startMs - o.historyDays * 86_400_000,
    labelling,
    ...(o.seqBase !== undefined ? { seqBase: o.seqBase } : {}),
  });
}
