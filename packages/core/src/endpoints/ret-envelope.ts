import { z } from 'zod';
import {
  BadRequestError,
  BodyEmptyError,
  DecodeError,
  HttpStatusError,
  InvalidCodeError,
  RateLimitedError,
  ServiceError,
  TooManyProductsError,
  UnauthorizedCodeError,
  UnauthorizedTokenError,
  type ServiceRefusal,
} from '../errors.js';
import type { EndpointKind } from '../plans.js';
import { redactToken } from '../internal/redact-token.js';

/** The envelope of every non-suspension response: `{ret, msg, trace, data}`. */
export const RetEnvelopeSchema = z.object({
  ret: z.number().int(),
  msg: z.string().optional(),
  trace: z.string().optional(),
  data: z.unknown().optional(),
});
export type RetEnvelope = z.infer<typeof RetEnvelopeSchema>;

/** The service's success `ret` (provider-facts.md: success is 200, not 0). */
export const RET_OK = 200;

/** The typed error for a failing `ret` (provider-facts.md, Return codes). */
export function errorForRet(refusal: ServiceRefusal & { ret: number }): ServiceError {
  switch (refusal.ret) {
    case 400:
    case 402:
      return new BadRequestError(refusal);
    case 401:
      return new UnauthorizedTokenError(refusal);
    case 429:
      return new RateLimitedError(refusal);
    case 600:
      return new InvalidCodeError(refusal);
    case 601:
      return new BodyEmptyError(refusal);
    case 604:
      return new UnauthorizedCodeError(refusal);
    case 603:
    case 605:
      return new TooManyProductsError(refusal);
    default:
      return new ServiceError(refusal);
  }
}

/** What an HTTP exchange produced, before interpretation. */
export interface RawResponse {
  readonly status: number;
  readonly text: string;
}

function snippet(text: string): string {
  const clean = redactToken(text);
  return clean.length > 120 ? `${clean.slice(0, 120)}…` : clean;
}

/**
 * Interprets a non-suspension response: a failing `ret` (with HTTP 200 or not) throws its typed
 * error, a non-2xx status without a `ret` an {@link HttpStatusError} (429: {@link RateLimitedError}),
 * a 2xx body that is not a ret envelope a {@link DecodeError}. On success returns the envelope,
 * whose `data` the endpoint's decoder checks next: shape and meaning stay separate steps.
 */
export function interpretRetResponse(
  endpoint: EndpointKind,
  res: RawResponse,
  trace: string | undefined,
  codes: readonly string[],
): RetEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(res.text);
  } catch {
    json = undefined;
  }
  const ok2xx = res.status >= 200 && res.status < 300;
  const parsed = RetEnvelopeSchema.safeParse(json);
  if (parsed.success) {
    const env = parsed.data;
    if (env.ret !== RET_OK) {
      throw errorForRet({
        endpoint,
        ret: env.ret,
        msg: env.msg ?? '',
        trace: env.trace ?? trace,
        status: res.status,
        codes,
      });
    }
    if (!ok2xx) throw new HttpStatusError(endpoint, res.status, snippet(res.text));
    return env;
  }
  if (!ok2xx) {
    if (res.status === 429)
      throw new RateLimitedError({
        endpoint,
        ret: undefined,
        msg: snippet(res.text),
        trace,
        status: 429,
        codes,
      });
    throw new HttpStatusError(endpoint, res.status, snippet(res.text));
  }
  if (json === undefined)
    throw new DecodeError(endpoint, '', `body is not JSON: ${JSON.stringify(snippet(res.text))}`);
  const issue = parsed.error.issues[0];
  throw new DecodeError(
    endpoint,
    issue === undefined ? '' : formatPath(issue.path),
    issue?.message ?? 'not a ret envelope',
  );
}

/** A decode error for the first issue of a failed zod parse of `data`, its path from the body root. */
export function decodeErrorFromZod(endpoint: EndpointKind, error: z.ZodError, prefix = 'data'): DecodeError {
  const issue = error.issues[0];
  return new DecodeError(
    endpoint,
    issue === undefined ? prefix : formatPath(issue.path, prefix),
    issue?.message ?? 'unexpected shape',
  );
}

/** A zod issue path as `data.kline_list[3].open_price`. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
