import { Agent, type Dispatcher } from 'undici';
import type { Clock } from './clock.js';
import type {
  CallOptions,
  QuoteflowClientOptions,
  QuoteflowLogger,
  RequestRecord,
  RetryOptions,
  TimeoutOptions,
} from './client-types.js';
import type { Bar, Exchange, DepthTick, ReadStamps, StaticInfo, SuspensionRecord } from './domain.js';
import {
  AbortedError,
  ClientClosedError,
  InvalidOptionError,
  MissingItemsError,
  NetworkError,
  QuoteflowError,
  UnreachableServiceError,
} from './errors.js';
import {
  buildBatchKlineRequest,
  checkBatchKlineGroups,
  decodeBatchKlineData,
  groupKey,
  type BatchKlineGroup,
  type BatchKlineGroupResult,
} from './endpoints/batch-kline.js';
import { buildDepthTickRequest, decodeDepthTickData } from './endpoints/depth-tick.js';
import { buildKlineRequest, checkKlineQuery, decodeKlineData, type KlineQuery } from './endpoints/kline.js';
import { ACCEPT_JSON, POST_JSON, type RequestSpec } from './endpoints/request-spec.js';
import { interpretRetResponse } from './endpoints/ret-envelope.js';
import { buildStaticInfoRequest, decodeStaticInfoData } from './endpoints/static-info.js';
import { buildSuspensionRequest, decodeSuspensionResponse } from './endpoints/suspension.js';
import { chunk } from './internal/chunk.js';
import { inParallel } from './internal/in-parallel.js';
import {
  CLIENT_DEFAULTS,
  checkBaseUrl,
  checkClock,
  checkCodeOverrides,
  checkTokenAndPlan,
  resolveRetry,
  resolveTimeouts,
} from './internal/client-options.js';
import { httpExchange, type HttpResponse } from './internal/http-exchange.js';
import { isAborted } from './internal/is-aborted.js';
import { newTrace } from './internal/new-trace.js';
import { redactErrorInPlace } from './internal/redact-token.js';
import { canPageBackwards, classifyCode, familyOf, type Family, type ProductClass } from './markets.js';
import { planLimits, type EndpointKind, type Plan, type PlanLimits } from './plans.js';
import type { RequestScheduler } from './request-scheduler.js';
import { retryWithBudget, type RetryWithBudgetOptions } from './retry-with-budget.js';
import { sharedSchedulerFor } from './scheduler/index.js';

export { CLIENT_DEFAULTS };

/**
 * The typed client of the market-data HTTP service: one method per endpoint, requests sized to
 * the plan, every request through the plan scheduler, retries with backoff and jitter, and
 * every code or group asked for checked in the response. Failures reject with a
 * {@link QuoteflowError} whose `code` is stable.
 *
 * @example
 * const client = new QuoteflowClient({ baseUrl: 'http://127.0.0.1:8080', token: 'demo', plan: 'basic' });
 * const ticks = await client.depth(['AAPL.US', 'BTCUSDT']);
 * await client.close();
 */
export class QuoteflowClient {
  readonly plan: Plan;
  /** The plan's limits with the overrides applied. */
  readonly limits: PlanLimits;
  readonly scheduler: RequestScheduler;
  /** The clock the client schedules, backs off and stamps bars with. */
  readonly clock: Clock;
  readonly #baseUrl: string;
  /**
   * Whether the service answered this client once (any HTTP status). Until it has, an address that
   * refuses connections or does not resolve is a wrong base URL, said at once, not retried.
   */
  #answered = false;
  readonly #token: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #timeouts: Required<TimeoutOptions>;
  readonly #retry: Required<RetryOptions>;
  readonly #logger: QuoteflowLogger;
  readonly #onRequest: ((record: RequestRecord) => void) | undefined;
  readonly #productClasses: Readonly<Record<string, ProductClass>>;
  readonly #families: Readonly<Record<string, Family>>;
  /** The last `receivedAtMs` handed out, so the next one is strictly later. */
  #lastReceivedAtMs = Number.NEGATIVE_INFINITY;
  #closed = false;

  constructor(options: QuoteflowClientOptions) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError('options', 'QuoteflowClient: options must be an object');
    this.#baseUrl = checkBaseUrl(options.baseUrl);
    checkTokenAndPlan(options);
    this.#token = options.token;
    this.plan = options.plan;
    try {
      this.limits = planLimits(options.plan, options.limitOverrides);
    } catch (err) {
      throw new InvalidOptionError('limitOverrides', `QuoteflowClient: ${(err as Error).message}`);
    }
    this.#timeouts = resolveTimeouts(options.timeouts);
    this.#retry = resolveRetry(options.retry);
    checkCodeOverrides(options);
    this.#productClasses = { ...options.productClasses };
    this.#families = { ...options.families };
    this.#logger = options.logger ?? {};
    this.#onRequest = options.onRequest;
    const clock = checkClock(options.clock);
    this.clock = clock;
    // The shared scheduler gets the plan's rates as tightened by the overrides; size overrides
    // stay out, so clients of one token with different sizes still share one scheduler. It is the
    // scheduler of this clock: clients on different clocks never share one.
    const rates = options.limitOverrides;
    this.scheduler =
      options.scheduler ??
      sharedSchedulerFor(
        options.token,
        planLimits(options.plan, {
          ...(rates?.rules === undefined ? {} : { rules: rates.rules }),
          ...(rates?.perDay === undefined ? {} : { perDay: rates.perDay }),
        }),
        { clock },
      );
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        keepAliveTimeout: CLIENT_DEFAULTS.keepAliveTimeoutMs,
        connections: CLIENT_DEFAULTS.connections,
      });
  }

  /** The endpoint family that serves `code` under this client's overrides. */
  familyOf(code: string, override?: Family): Family {
    return override ?? this.#families[code] ?? familyOf(code);
  }

  /** The product class of `code` under this client's overrides. */
  productClassOf(code: string): ProductClass {
    return this.#productClasses[code] ?? classifyCode(code);
  }

  /** Whether `/kline` can page backwards for `code` (only forex, precious metals and crypto can). */
  canPageBackwards(code: string): boolean {
    return canPageBackwards(this.productClassOf(code));
  }

  /**
   * All suspension and resumption records of the last year of one exchange, latest first.
   * Paced at one query a minute by the scheduler (spec: Limits); uses the longer timeout.
   */
  async suspensions(
    exchange: Exchange,
    options: CallOptions & { readonly page?: number; readonly size?: number } = {},
  ): Promise<SuspensionRecord[]> {
    const query = {
      exchange,
      ...(options.page === undefined ? {} : { page: options.page }),
      ...(options.size === undefined ? {} : { size: options.size }),
    };
    buildSuspensionRequest(query); // checks the arguments before anything is scheduled
    return this.#send(
      'suspension',
      () => buildSuspensionRequest(query),
      (res) => decodeSuspensionResponse(exchange, res.status, res.text),
      options,
    );
  }

  /** Static info of stock codes (US, HK, A shares), in the order asked; split to the plan's codes per request. */
  async staticInfo(codes: readonly string[], options: CallOptions = {}): Promise<StaticInfo[]> {
    const unique = uniqueCodes(codes, 'staticInfo');
    for (const code of unique) {
      if (this.familyOf(code, options.family) !== 'stock') {
        throw new InvalidOptionError(
          'codes',
          `staticInfo: only US, Hong Kong and A-share stocks have static info, got ${JSON.stringify(code)}`,
        );
      }
    }
    const max = this.limits.codesPerRequest;
    return inParallel(chunk(unique, max), options.signal, (part, signal) =>
      this.#collect<StaticInfo>(
        'static-info',
        part,
        (s) => s.code,
        withSignal(options, signal),
        (subset, opts) =>
          this.#send(
            'static-info',
            (trace) => buildStaticInfoRequest(subset, trace, max),
            (res, spec) => decodeStaticInfoData(this.#ok(res, spec)),
            opts,
          ),
      ),
    );
  }

  /** The latest order book of each code, in the order asked; split by family and to the plan's codes per request. */
  async depth(codes: readonly string[], options: CallOptions = {}): Promise<DepthTick[]> {
    const unique = uniqueCodes(codes, 'depth');
    const max = this.limits.codesPerRequest;
    const parts = [...this.#byFamily(unique, (c) => c, options.family)].flatMap(([family, list]) =>
      chunk(list, max).map((p) => [family, p] as const),
    );
    const ticks = await inParallel(parts, options.signal, ([family, part], signal) =>
      this.#collect<DepthTick>(
        'depth-tick',
        part,
        (t) => t.code,
        withSignal(options, signal),
        (subset, opts) =>
          this.#send(
            'depth-tick',
            (trace) => buildDepthTickRequest(subset, family, trace, max),
            (res, spec) => decodeDepthTickData(this.#ok(res, spec)),
            opts,
          ),
      ),
    );
    const byCode = new Map(ticks.map((t) => [t.code, t]));
    return unique.map((c) => byCode.get(c)!);
  }

  /**
   * Up to 500 bars of one code and type, oldest first, backwards from `endMs` (or the latest).
   * `endMs` is refused for codes that cannot page backwards (stocks accept only the latest page).
   * Priority defaults to `'live'`; history paging passes `'backfill'`.
   */
  async kline(query: KlineQuery, options: CallOptions = {}): Promise<Bar[]> {
    checkKlineQuery(query);
    if (query.endMs !== undefined && query.endMs !== 0 && !this.canPageBackwards(query.code)) {
      throw new InvalidOptionError(
        'endMs',
        `kline: ${query.code} is ${this.productClassOf(query.code)}: only forex, precious metals and crypto accept an end time (stock codes accept only 0, the latest page)`,
      );
    }
    const family = this.familyOf(query.code, options.family);
    const [result] = await this.#collect<{ code: string; bars: readonly Bar[] }>(
      'kline',
      [query.code],
      (r) => r.code,
      options,
      (_subset, opts) =>
        this.#send(
          'kline',
          (trace) => buildKlineRequest(query, family, trace),
          (res, spec) => {
            const r = decodeKlineData(this.#ok(res, spec), res);
            // A response for another code or type does not answer the question: treat it as missing.
            return r.code === query.code && r.klineType === query.klineType ? [r] : [];
          },
          opts,
        ),
    );
    return [...result!.bars];
  }

  /**
   * The latest bars (1 or 2 each) of many groups (code + K-line type), in the order asked. A mixed
   * batch is split by family, each family's groups to the plan's group cap; the pieces are scheduled.
   */
  async batchKline(
    groups: readonly BatchKlineGroup[],
    options: CallOptions = {},
  ): Promise<BatchKlineGroupResult[]> {
    if (!Array.isArray(groups) || groups.length === 0)
      throw new InvalidOptionError('groups', 'batchKline: "groups" must be a non-empty array');
    const byKey = new Map<string, BatchKlineGroup>();
    for (const g of groups) byKey.set(groupKey(g.code, g.klineType), g);
    const unique = [...byKey.values()];
    checkBatchKlineGroups(unique, Number.POSITIVE_INFINITY);
    const max = this.limits.batchKlineGroups;
    const parts = [...this.#byFamily(unique, (g) => g.code, options.family)].flatMap(([family, list]) =>
      chunk(list, max).map((p) => [family, p] as const),
    );
    const results = await inParallel(parts, options.signal, ([family, part], signal) =>
      this.#collect<BatchKlineGroupResult>(
        'batch-kline',
        part.map((g) => groupKey(g.code, g.klineType)),
        (r) => groupKey(r.code, r.klineType),
        withSignal(options, signal),
        (subset, opts) =>
          this.#send(
            'batch-kline',
            (trace) =>
              buildBatchKlineRequest(
                subset.map((k) => byKey.get(k)!),
                family,
                trace,
                max,
              ),
            (res, spec) => decodeBatchKlineData(this.#ok(res, spec), res),
            opts,
          ),
      ),
    );
    const byResult = new Map(results.map((r) => [groupKey(r.code, r.klineType), r]));
    return [...byKey.keys()].map((k) => byResult.get(k)!);
  }

  /** Closes the client's own keep-alive connections (not an injected dispatcher). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** Same as {@link QuoteflowClient.close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #ok(res: HttpResponse, spec: RequestSpec): unknown {
    return interpretRetResponse(spec.endpoint, res, spec.trace, spec.asked).data;
  }

  *#byFamily<T>(
    items: readonly T[],
    codeOf: (t: T) => string,
    override: Family | undefined,
  ): Iterable<[Family, T[]]> {
    const map = new Map<Family, T[]>();
    for (const item of items) {
      const family = this.familyOf(codeOf(item), override);
      let list = map.get(family);
      if (list === undefined) map.set(family, (list = []));
      list.push(item);
    }
    yield* map;
  }

  /**
   * Asks for `asked` (codes or group keys) and checks that each came back; asks again for the
   * missing ones (`retry.missingRetries` times), then rejects with {@link MissingItemsError}.
   * Results come in the order asked; anything not asked for is ignored.
   */
  async #collect<T>(
    endpoint: EndpointKind,
    asked: readonly string[],
    keyOf: (t: T) => string,
    options: CallOptions,
    request: (subset: string[], options: CallOptions) => Promise<readonly T[]>,
  ): Promise<T[]> {
    const found = new Map<string, T>();
    let pending = [...asked];
    let missing: MissingItemsError | undefined;
    return this.#retrying(
      endpoint,
      options.signal,
      async (round) => {
        const items = await request(pending, options);
        const wanted = new Set(pending);
        for (const item of items) {
          const key = keyOf(item);
          if (wanted.has(key) && !found.has(key)) found.set(key, item);
        }
        pending = pending.filter((k) => !found.has(k));
        if (pending.length === 0) return asked.map((k) => found.get(k)!);
        this.#logger.warn?.('response.missing-items', { endpoint, missing: pending, round });
        throw (missing = new MissingItemsError(endpoint, pending, [...found.values()], round));
      },
      {
        maxAttempts: this.#retry.missingRetries + 1,
        budgetMs: Number.POSITIVE_INFINITY,
        retryable: (err) => err === missing,
      },
    );
  }

  /**
   * Runs `attempt` under the client's retry policy ({@link retryWithBudget}: backoff with full
   * jitter, waited on the client's clock, since backoff is quota time and runs as fast as the
   * clock); an abort is `AbortedError`.
   */
  async #retrying<T>(
    endpoint: EndpointKind,
    signal: AbortSignal | undefined,
    attempt: (n: number) => Promise<T>,
    options: Pick<RetryWithBudgetOptions, 'maxAttempts' | 'retryable' | 'onRetry' | 'budgetMs'>,
  ): Promise<T> {
    try {
      return await retryWithBudget(attempt, {
        ...options,
        baseDelayMs: this.#retry.baseDelayMs,
        maxDelayMs: this.#retry.maxDelayMs,
        random: this.#retry.random,
        clock: this.clock,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      if (isAborted(signal) && !(err instanceof AbortedError)) throw new AbortedError(endpoint);
      throw err;
    }
  }

  /**
   * One logical request: scheduled, sent, interpreted and decoded, retried while the error is
   * retryable. Each answer is stamped with when its request left and when it arrived.
   */
  async #send<T>(
    endpoint: EndpointKind,
    build: (trace: string) => RequestSpec,
    decode: (res: StampedResponse, spec: RequestSpec) => T,
    options: CallOptions,
  ): Promise<T> {
    /** The last failure of a request that was made (closing and aborts are not retried nor counted). */
    let failed: QuoteflowError | undefined;
    const once = (attempt: number): Promise<T> =>
      this.#attempt(endpoint, attempt, build, decode, options, (err) => (failed = err));
    try {
      return await this.#retrying(endpoint, options.signal, once, {
        ...this.#retryLimits(endpoint),
        retryable: (err) => err === failed && (err as QuoteflowError).retryable,
        onRetry: (err, attempt, delayMs) =>
          this.#logger.warn?.('request.retry', {
            endpoint,
            attempt,
            code: (err as QuoteflowError).code,
            delayMs,
            message: (err as QuoteflowError).message,
          }),
      });
    } catch (err) {
      if (failed !== undefined && err === failed) noteGaveUp(failed);
      throw err;
    }
  }

  /**
   * One attempt of a request: scheduled, sent, decoded and recorded. A failure of a request that
   * was made goes through `failedWith` (which returns what to throw); closing and aborts do not.
   */
  async #attempt<T>(
    endpoint: EndpointKind,
    attempt: number,
    build: (trace: string) => RequestSpec,
    decode: (res: StampedResponse, spec: RequestSpec) => T,
    options: CallOptions,
    failedWith: (err: QuoteflowError) => QuoteflowError,
  ): Promise<T> {
    const signal = options.signal;
    if (this.#closed) throw new ClientClosedError(endpoint);
    if (signal?.aborted === true) throw new AbortedError(endpoint);
    const queuedAtMs = this.clock.now();
    let sentAtMs: number | undefined;
    try {
      const spec = build(newTrace());
      const res = await this.scheduler.schedule(
        {
          endpoint,
          priority: options.priority ?? 'live',
          ...(options.sourceId === undefined ? {} : { sourceId: options.sourceId }),
          ...(signal === undefined ? {} : { signal }),
        },
        () => {
          // Read here, when the scheduler lets the request go, not when it was queued: the
          // service computes its answer at or after this instant.
          sentAtMs = this.clock.now();
          return this.#exchange(endpoint, spec, signal, sentAtMs);
        },
      );
      this.#logger.debug?.('response', {
        endpoint,
        trace: spec.trace,
        status: res.status,
        bytes: res.text.length,
        attempt,
      });
      const decoded = decode(res, spec);
      this.#recordRequest(endpoint, attempt, queuedAtMs, sentAtMs, 'ok');
      return decoded;
    } catch (err) {
      const outcome = err instanceof QuoteflowError ? err.code : 'error';
      this.#recordRequest(endpoint, attempt, queuedAtMs, sentAtMs, outcome);
      if (isAborted(signal)) throw err instanceof AbortedError ? err : new AbortedError(endpoint);
      if (!(err instanceof QuoteflowError)) throw err;
      throw failedWith(this.#failureOf(endpoint, attempt, err));
    }
  }

  /** The HTTP exchange of a request the scheduler let go at `readAtMs`, stamped with when it arrived. */
  async #exchange(
    endpoint: EndpointKind,
    spec: RequestSpec,
    signal: AbortSignal | undefined,
    readAtMs: number,
  ): Promise<StampedResponse> {
    // Real time, not `this.clock`: the timeout guards a socket, not market time (on a 30x clock a
    // 10 s timeout would otherwise give the service 0.3 s to answer). undici arms it.
    const timeoutMs = endpoint === 'suspension' ? this.#timeouts.suspensionMs : this.#timeouts.requestMs;
    const answer = await httpExchange({
      endpoint,
      url: this.#urlOf(spec),
      method: spec.method,
      headers: spec.method === 'POST' ? POST_JSON : ACCEPT_JSON,
      body: spec.body,
      timeoutMs,
      dispatcher: this.#dispatcher,
      token: this.#token,
      signal,
    });
    this.#answered = true;
    return { ...answer, readAtMs, receivedAtMs: this.#nextReceivedAtMs() };
  }

  /**
   * A failed attempt's error, token redacted and its attempt recorded; a refused or unresolvable
   * address of a service that never answered becomes an {@link UnreachableServiceError} (not
   * retried); a rate limit pauses the scheduler.
   */
  #failureOf(endpoint: EndpointKind, attempt: number, err: QuoteflowError): QuoteflowError {
    redactErrorInPlace(err, this.#token);
    if (!this.#answered && err instanceof NetworkError && NO_SERVICE_CODES.has(codeOf(err.cause)))
      return new UnreachableServiceError(endpoint, this.#baseUrl, messageOf(err.cause), err.cause);
    if (err.code === 'QF_RATE_LIMITED') this.scheduler.reportRateLimited(endpoint);
    err.attempts = attempt;
    return err;
  }

  /** How long a call of `endpoint` retries: suspension calls a count of attempts, the others the budget too. */
  #retryLimits(endpoint: EndpointKind): { maxAttempts: number; budgetMs: number } {
    return endpoint === 'suspension'
      ? { maxAttempts: this.#retry.suspensionMaxAttempts, budgetMs: Number.POSITIVE_INFINITY }
      : { maxAttempts: this.#retry.maxAttempts, budgetMs: this.#retry.budgetMs };
  }

  #recordRequest(
    endpoint: EndpointKind,
    attempt: number,
    queuedAtMs: number,
    sentAtMs: number | undefined,
    outcome: string,
  ): void {
    if (sentAtMs === undefined || this.#onRequest === undefined) return;
    try {
      this.#onRequest({ endpoint, attempt, queuedAtMs, sentAtMs, settledAtMs: this.clock.now(), outcome });
    } catch {
      // A listener's failure must not fail the request.
    }
  }

  /** `max(now, previous + 1)`: one instant per answer, so equal stamps mean the same answer. */
  #nextReceivedAtMs(): number {
    this.#lastReceivedAtMs = Math.max(this.clock.now(), this.#lastReceivedAtMs + 1);
    return this.#lastReceivedAtMs;
  }

  #urlOf(spec: RequestSpec): string {
    let url = `${this.#baseUrl}${spec.path}?token=${encodeURIComponent(this.#token)}`;
    for (const [key, value] of Object.entries(spec.query)) url += `&${key}=${encodeURIComponent(value)}`;
    return url;
  }
}

/** Transport codes of an address where nothing accepts connections, or a name that does not resolve. */
const NO_SERVICE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_NONAME',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
};
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Says in a failure that retries ran out, and after how many attempts. */
function noteGaveUp(failed: QuoteflowError): void {
  const attempts = failed.attempts;
  if (attempts <= 1) return;
  failed.message += ` (gave up after ${attempts} attempts)`;
  if (failed.stack !== undefined)
    failed.stack = failed.stack.replace(/^([^\n]*)/, `$1 (gave up after ${attempts} attempts)`);
}

/** An HTTP answer with the instants its request left and it arrived. */
type StampedResponse = HttpResponse & ReadStamps;

function uniqueCodes(codes: readonly string[], what: string): string[] {
  if (!Array.isArray(codes) || codes.length === 0)
    throw new InvalidOptionError('codes', `${what}: "codes" must be a non-empty array`);
  codes.forEach((code, i) => {
    if (typeof code !== 'string' || code === '')
      throw new InvalidOptionError(
        `codes[${i}]`,
        `${what}: "codes[${i}]" must be a non-empty string, got ${JSON.stringify(code)}`,
      );
  });
  return [...new Set(codes)];
}

/** `options` with `signal` set, or without the key when there is none (exactOptionalPropertyTypes). */
function withSignal(options: CallOptions, signal: AbortSignal | undefined): CallOptions {
  if (signal === options.signal) return options;
  const { signal: _ignored, ...rest } = options;
  return signal === undefined ? rest : { ...rest, signal };
}
