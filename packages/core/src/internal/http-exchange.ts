import { request, type Dispatcher } from 'undici';
import { AbortedError, NetworkError, RequestTimeoutError } from '../errors.js';
import type { EndpointKind } from '../plans.js';
import { isAborted } from './abortable-sleep.js';
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

const TIMED_OUT = Symbol('timed out');

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
 * {@link RequestTimeoutError} past `timeoutMs`, {@link AbortedError} when `signal` aborts,
 * {@link NetworkError} otherwise (its cause a sanitized copy of the undici error).
 */
export async function httpExchange(x: HttpExchange): Promise<HttpResponse> {
  if (x.signal?.aborted === true) throw new AbortedError(x.endpoint);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(TIMED_OUT), x.timeoutMs);
  const onAbort = () => controller.abort(x.signal?.reason);
  x.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await request(x.url, {
      method: x.method,
      headers: x.headers,
      body: x.body ?? null,
      dispatcher: x.dispatcher,
      signal: controller.signal,
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason === TIMED_OUT)
      throw new RequestTimeoutError(x.endpoint, x.timeoutMs);
    if (isAborted(x.signal)) throw new AbortedError(x.endpoint);
    const safe = sanitize(err, x.token);
    const code = (safe as Error & { code?: string }).code;
    throw new NetworkError(x.endpoint, `${code === undefined ? '' : `${code}: `}${safe.message}`, safe);
  } finally {
    clearTimeout(timer);
    x.signal?.removeEventListener('abort', onAbort);
  }
}
