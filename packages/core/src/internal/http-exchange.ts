import { request, type Dispatcher } from 'undici';
import { AbortedError, NetworkError, RequestTimeoutError } from '../errors.js';
import type { EndpointKind } from '../plans.js';
import { isAborted } from './is-aborted.js';
import { redactToken } from './redact-token.js';

/** What one HTTP exchange produced. */
export interface HttpResponse {
  readonly status: number;
  readonly text: string;
}

/** One HTTP exchange to make. `url` carries the token: it never goes into an error. */
export interface HttpExchange {
  readonly endpoint: EndpointKind;
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  readonly timeoutMs: number;
  readonly dispatcher: Dispatcher;
  readonly token: string;
  readonly signal: AbortSignal | undefined;
}

/** undici's own timeout errors: cheaper than a timer and an AbortController per request. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** A copy of a transport error that keeps its name, code and message, token redacted, and nothing else. */
function sanitize(err: unknown, token: string): Error {
  if (!(err instanceof Error)) return new Error(redactToken(String(err), token));
  const copy = new Error(redactToken(err.message, token));
  copy.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  if (err.cause !== undefined) copy.cause = sanitize(err.cause, token);
  return copy;
}

/**
 * Makes one request with undici and reads the whole body as text. Failures come out typed:
 * {@link RequestTimeoutError} when no headers arrive, or the body stalls, for `timeoutMs`;
 * {@link AbortedError} when `signal` aborts; {@link NetworkError} otherwise (its cause a
 * sanitized copy of the undici error).
 */
export async function httpExchange(x: HttpExchange): Promise<HttpResponse> {
  if (isAborted(x.signal)) throw new AbortedError(x.endpoint);
  try {
    const res = await request(x.url, {
      method: x.method,
      headers: x.headers,
      body: x.body ?? null,
      dispatcher: x.dispatcher,
      headersTimeout: x.timeoutMs,
      bodyTimeout: x.timeoutMs,
      ...(x.signal === undefined ? {} : { signal: x.signal }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  } catch (err) {
    if (isAborted(x.signal)) throw new AbortedError(x.endpoint);
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && TIMEOUT_CODES.has(code))
      throw new RequestTimeoutError(x.endpoint, x.timeoutMs);
    const safe = sanitize(err, x.token);
    throw new NetworkError(x.endpoint, `${typeof code === 'string' ? `${code}: ` : ''}${safe.message}`, safe);
  }
}
