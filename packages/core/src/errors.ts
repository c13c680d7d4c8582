import type { ErrorCode } from './error-codes.js';
import type { EndpointKind } from './plans.js';

/** Marks quoteflow errors across copies of this package in one process (see {@link isQuoteflowError}). */
const QUOTEFLOW_ERROR = Symbol.for('quoteflow.error');

/** Options every quoteflow error takes. */
export interface QuoteflowErrorOptions {
  readonly retryable?: boolean;
  readonly cause?: unknown;
}

/**
 * The one base class of every error quoteflow raises, in every package. `code` is stable (one of
 * `ERROR_CODES`), `retryable` is the retry verdict, `attempts` the number of requests made before
 * the error was raised (1 unless retried). Messages never contain the token.
 */
export class QuoteflowError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** How many attempts were made before this error was raised; set by the retry layer. */
  attempts = 1;
  constructor(code: ErrorCode, message: string, opts: QuoteflowErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = opts.retryable ?? false;
  }
}
// On the prototype, not the instances: nothing changes in how an error prints, compares or serialises.
Object.defineProperty(QuoteflowError.prototype, QUOTEFLOW_ERROR, { value: true });

/** An option or argument is invalid; thrown when the object is built or the call is made. */
export class InvalidOptionError extends QuoteflowError {
  /** The option's name, as the caller wrote it. */
  readonly option: string;
  constructor(option: string, message: string) {
    super('QF_INVALID_OPTION', message);
    this.option = option;
  }
}

/** What the service said when it refused a request. */
export interface ServiceRefusal {
  readonly endpoint: EndpointKind;
  /** The body's `ret`, if the body had one (suspension endpoints have none). */
  readonly ret: number | undefined;
  /** The body's `msg` (or the suspension body's `error`). */
  readonly msg: string;
  /** The request's trace, for the provider's log lookup. */
  readonly trace: string | undefined;
  /** HTTP status of the response. */
  readonly status: number;
  /** The codes (or `code:klineType` groups) of the refused request. */
  readonly codes?: readonly string[];
}

function describeRefusal(r: ServiceRefusal, what: string): string {
  const ret = r.ret === undefined ? '' : ` ret ${r.ret}`;
  const trace = r.trace === undefined ? '' : ` (trace ${r.trace})`;
  return `${r.endpoint}: ${what}: service answered${ret} ${JSON.stringify(r.msg)} with HTTP ${r.status}${trace}`;
}

/** The service refused the request with a failing `ret` (or `success: false`). */
export class ServiceError extends QuoteflowError {
  readonly endpoint: EndpointKind;
  readonly ret: number | undefined;
  readonly msg: string;
  readonly trace: string | undefined;
  readonly status: number;
  readonly codes: readonly string[];
  constructor(
    refusal: ServiceRefusal,
    message = describeRefusal(refusal, 'service refused the request'),
    code: ErrorCode = 'QF_SERVICE',
    retryable = refusal.status >= 500,
  ) {
    super(code, message, { retryable });
    this.endpoint = refusal.endpoint;
    this.ret = refusal.ret;
    this.msg = refusal.msg;
    this.trace = refusal.trace;
    this.status = refusal.status;
    this.codes = refusal.codes ?? [];
  }
}

/** `ret: 429` or HTTP 429: the plan's rate limit was hit. Retried after backing off. */
export class RateLimitedError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(
      r,
      describeRefusal(r, 'rate limited; the scheduler slows down and retries'),
      'QF_RATE_LIMITED',
      true,
    );
  }
}

/** `ret: 401`: the token is missing, unknown or expired. Check the token; never retried. */
export class UnauthorizedTokenError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(
      r,
      describeRefusal(r, 'token invalid; check the subscription token'),
      'QF_UNAUTHORIZED_TOKEN',
      false,
    );
  }
}

/** `ret: 600`: a requested product code does not exist (codes are case-sensitive). */
export class InvalidCodeError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(
      r,
      describeRefusal(r, `code invalid among ${JSON.stringify(r.codes ?? [])}; codes are case-sensitive`),
      'QF_INVALID_CODE',
      false,
    );
  }
}

/** `ret: 601`: the request body or `data` was empty. */
export class BodyEmptyError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(r, describeRefusal(r, 'body empty'), 'QF_BODY_EMPTY', false);
  }
}

/** `ret: 604`: the token's plan does not cover a requested product. */
export class UnauthorizedCodeError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(
      r,
      describeRefusal(r, `code not covered by the plan among ${JSON.stringify(r.codes ?? [])}`),
      'QF_UNAUTHORIZED_CODE',
      false,
    );
  }
}

/** `ret: 605`: too many products in one request for the plan; lower `limitOverrides`. */
export class TooManyProductsError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(
      r,
      describeRefusal(
        r,
        'too many products in one request; lower limitOverrides.codesPerRequest or batchKlineGroups',
      ),
      'QF_TOO_MANY_PRODUCTS',
      false,
    );
  }
}

/** `ret: 400`: the request's JSON was refused (a quoteflow bug or an unsupported argument). */
export class BadRequestError extends ServiceError {
  constructor(r: ServiceRefusal) {
    super(r, describeRefusal(r, 'bad request'), 'QF_BAD_REQUEST', false);
  }
}

/** A non-2xx response without a body quoteflow understands. Retried for 408, 429 and 5xx. */
export class HttpStatusError extends QuoteflowError {
  readonly endpoint: EndpointKind;
  readonly status: number;
  constructor(endpoint: EndpointKind, status: number, bodySnippet: string) {
    const retryable = status >= 500 || status === 408 || status === 429;
    super(
      'QF_HTTP_STATUS',
      `${endpoint}: HTTP ${status}${bodySnippet === '' ? '' : `: ${JSON.stringify(bodySnippet)}`}`,
      { retryable },
    );
    this.endpoint = endpoint;
    this.status = status;
  }
}

/** The connection failed (refused, reset, DNS). Retried. `cause` is the transport error, token redacted. */
export class NetworkError extends QuoteflowError {
  readonly endpoint: EndpointKind;
  constructor(endpoint: EndpointKind, detail: string, cause?: unknown) {
    super('QF_NETWORK', `${endpoint}: network error: ${detail}`, { retryable: true, cause });
    this.endpoint = endpoint;
  }
}

/**
 * The service's address refused the connection, or its name did not resolve, and the service has
 * never answered this client: a wrong base URL or a service not started, not an outage. Not
 * retried (retries are for a service that answered before); code `QF_NETWORK`. `cause` is the
 * transport error, token redacted.
 */
export class UnreachableServiceError extends QuoteflowError {
  /** The endpoint of the request that found nothing there. */
  readonly endpoint: EndpointKind;
  /** The base URL nothing answered at. */
  readonly baseUrl: string;
  constructor(endpoint: EndpointKind, baseUrl: string, detail: string, cause?: unknown) {
    super(
      'QF_NETWORK',
      `${endpoint}: no service at ${baseUrl}: ${detail} (it has not answered once, so this is not retried: ` +
        'is the base URL right, and the service running?)',
      { retryable: false, cause },
    );
    this.endpoint = endpoint;
    this.baseUrl = baseUrl;
  }
}

/** No complete response within the per-request timeout. Retried. */
export class RequestTimeoutError extends QuoteflowError {
  readonly endpoint: EndpointKind;
  readonly timeoutMs: number;
  constructor(endpoint: EndpointKind, timeoutMs: number) {
    super(
      'QF_TIMEOUT',
      `${endpoint}: no response within ${timeoutMs} ms; raise timeouts.${endpoint === 'suspension' ? 'suspensionMs' : 'requestMs'} if the service is slow`,
      {
        retryable: true,
      },
    );
    this.endpoint = endpoint;
    this.timeoutMs = timeoutMs;
  }
}

/** The response did not match the schema; `path` names the bad field (`data.kline_list[3].open_price`). Retried. */
export class DecodeError extends QuoteflowError {
  readonly endpoint: EndpointKind;
  readonly path: string;
  constructor(endpoint: EndpointKind, path: string, problem: string, cause?: unknown) {
    super('QF_DECODE', `${endpoint}: malformed response at ${path === '' ? '(root)' : path}: ${problem}`, {
      retryable: true,
      cause,
    });
    this.endpoint = endpoint;
    this.path = path;
  }
}

/**
 * Codes (or `code:klineType` groups) that were asked for but did not come back, even after the
 * bounded retries. `partial` holds what did come back, so nothing is lost.
 */
export class MissingItemsError<T = unknown> extends QuoteflowError {
  readonly endpoint: EndpointKind;
  readonly missing: readonly string[];
  declare readonly partial: readonly T[];
  constructor(endpoint: EndpointKind, missing: readonly string[], partial: readonly T[], attempts: number) {
    super(
      'QF_MISSING_ITEMS',
      `${endpoint}: the service did not return ${JSON.stringify(missing)} after ${attempts} attempts`,
    );
    this.endpoint = endpoint;
    this.missing = missing;
    // Not enumerable: the records may hold bigints (`seq`), which would make JSON.stringify(err) throw.
    Object.defineProperty(this, 'partial', {
      value: partial,
      enumerable: false,
      writable: false,
      configurable: true,
    });
    this.attempts = attempts;
  }
}

/** The caller aborted (AbortSignal) or unsubscribed. Never retried. */
export class AbortedError extends QuoteflowError {
  constructor(what: string, cause?: unknown) {
    super('QF_ABORTED', `${what}: aborted by the caller`, { cause });
  }
}

/** The client was closed; make a new one. */
export class ClientClosedError extends QuoteflowError {
  constructor(what: string) {
    super('QF_CLOSED', `${what}: the client is closed`);
  }
}

/** An adapter's buffer overflowed because the consumer read slower than the source produced. */
export class BufferOverflowError extends QuoteflowError {
  readonly limit: number;
  constructor(limit: number) {
    super(
      'QF_BUFFER_OVERFLOW',
      `more than ${limit} values buffered for a slow consumer; read faster or raise maxBuffered`,
    );
    this.limit = limit;
  }
}

/**
 * Whether `err` is a quoteflow error, optionally with a given code: of any package, and also one of
 * another copy of `@quoteflow/core` in the process (two versions installed side by side), which
 * `instanceof QuoteflowError` does not recognise. The way to branch on a code from outside the
 * package that throws it: `code` is checked against {@link ErrorCode} when compiled.
 */
export function isQuoteflowError(err: unknown, code?: ErrorCode): err is QuoteflowError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { [QUOTEFLOW_ERROR]?: unknown })[QUOTEFLOW_ERROR] === true &&
    (code === undefined || (err as QuoteflowError).code === code)
  );
}
