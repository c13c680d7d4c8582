import { z } from 'zod';
import { EXCHANGE_TIME_ZONES, EXCHANGES, type Exchange, type SuspensionRecord } from '../domain.js';
import { DecodeError, HttpStatusError, InvalidOptionError, ServiceError } from '../errors.js';
import { parseWallClock } from '../internal/zoned-time.js';
import { suspensionInstant } from '../suspension-instant.js';
import { type RequestSpec } from './request-spec.js';
import { decodeErrorFromZod, errorForRet, formatPath } from './ret-envelope.js';

/** Optional paging parameters; the spec says the endpoints return the whole year regardless. */
export interface SuspensionQuery {
  readonly exchange: Exchange;
  readonly page?: number;
  readonly size?: number;
}

/** Builds the `GET /api/suspension/{exchange}` request (no trace: the endpoint takes none). */
export function buildSuspensionRequest(q: SuspensionQuery): RequestSpec {
  if (!(EXCHANGES as readonly string[]).includes(q.exchange)) {
    throw new InvalidOptionError(
      'exchange',
      `suspensions: "exchange" must be one of ${EXCHANGES.join(', ')}, got ${JSON.stringify(q.exchange)}`,
    );
  }
  const query: Record<string, string> = {};
  for (const key of ['page', 'size'] as const) {
    const v = q[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 1)
      throw new InvalidOptionError(
        key,
        `suspensions: "${key}" must be a positive integer, got ${JSON.stringify(v)}`,
      );
    query[key] = String(v);
  }
  return {
    endpoint: 'suspension',
    method: 'GET',
    path: `/api/suspension/${q.exchange}`,
    query,
    body: undefined,
    trace: undefined,
    asked: [],
  };
}

// Nullable = Yes fields may be null or "" (spec, Suspension record); numbers are tolerated as text.
const nullable = z.union([z.string(), z.number()]).nullish();

/** One suspension record on the wire. */
export const SuspensionRecordSchema = z.object({
  symbol: z.union([z.string(), z.number()]),
  symbolName: nullable,
  haltReason: nullable,
  haltDate: nullable,
  haltTime: nullable,
  haltPeriod: nullable,
  haltDateTime: nullable,
  resumeDate: nullable,
  resumeTime: nullable,
  resumeDateTime: nullable,
  sourceExchange: nullable,
  pauseThresholdPrice: nullable,
  publishDate: z.string(),
});

/** The suspension response envelope (spec: Suspension response envelope). */
export const SuspensionEnvelopeSchema = z.object({
  success: z.literal(true),
  timestamp: z.string(),
  totalCount: z.number().int(),
  data: z.array(z.unknown()),
  totalPages: z.number().int().nullish(),
  currentPage: z.number().int().nullish(),
  currentSize: z.number().int().nullish(),
});

/** Provider messages (provider-facts.md, Return codes) and the ret each one stands for. */
const KNOWN_MESSAGES: readonly (readonly [text: string, ret: number])[] = [
  ['token invalid', 401],
  ['rate limit', 429],
  ['code unauthorized', 604],
  ['code invalid', 600],
];

/** The suspension error body: HTTP 500 `{success: false, error}` (spec: Errors). */
export const SuspensionErrorSchema = z.object({ success: z.literal(false), error: z.string() });

function text(v: string | number | null | undefined): string | undefined {
  return v == null || v === '' ? undefined : String(v);
}

/**
 * Interprets and decodes a suspension response: HTTP 500 `{success:false,error}` (or
 * `success:false` with any status) throws a {@link ServiceError}; other non-2xx an
 * {@link HttpStatusError}; a malformed body a {@link DecodeError} naming the path.
 * Wall-clock times are read in the exchange's zone (provider-facts.md), raw strings kept.
 */
export function decodeSuspensionResponse(
  exchange: Exchange,
  status: number,
  body: string,
): SuspensionRecord[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  const refusal = SuspensionErrorSchema.safeParse(json);
  if (refusal.success) {
    const msg = refusal.data.error;
    // The body has no ret; a provider message from the ret table still says what happened.
    const known = KNOWN_MESSAGES.find(([text]) => msg.toLowerCase().includes(text));
    const details = { endpoint: 'suspension', msg, trace: undefined, status, codes: [exchange] } as const;
    throw known === undefined
      ? new ServiceError({ ...details, ret: undefined })
      : errorForRet({ ...details, ret: known[1] });
  }
  if (status < 200 || status >= 300) throw new HttpStatusError('suspension', status, body.slice(0, 120));
  if (json === undefined)
    throw new DecodeError('suspension', '', `body is not JSON: ${JSON.stringify(body.slice(0, 120))}`);
  const env = SuspensionEnvelopeSchema.safeParse(json);
  if (!env.success) {
    const issue = env.error.issues[0];
    throw new DecodeError(
      'suspension',
      issue === undefined ? '' : formatPath(issue.path),
      issue?.message ?? 'not a suspension envelope',
    );
  }
  const tz = EXCHANGE_TIME_ZONES[exchange];
  return env.data.data.map((raw, i) => {
    const parsed = SuspensionRecordSchema.safeParse(raw);
    if (!parsed.success) throw decodeErrorFromZod('suspension', parsed.error, `data[${i}]`);
    const r = parsed.data;
    const publishAtMs = parseWallClock(r.publishDate, tz);
    if (publishAtMs === undefined) {
      throw new DecodeError(
        'suspension',
        `data[${i}].publishDate`,
        `expected "yyyy-MM-dd HH:mm:ss", got ${JSON.stringify(r.publishDate.slice(0, 40))}`,
      );
    }
    const haltDate = text(r.haltDate);
    const haltTime = text(r.haltTime);
    const haltDateTime = text(r.haltDateTime);
    const resumeDate = text(r.resumeDate);
    const resumeTime = text(r.resumeTime);
    const resumeDateTime = text(r.resumeDateTime);
    return {
      type: 'suspension',
      exchange,
      symbol: String(r.symbol),
      symbolName: text(r.symbolName),
      haltReason: text(r.haltReason),
      haltDate,
      haltTime,
      haltPeriod: text(r.haltPeriod),
      haltDateTime,
      resumeDate,
      resumeTime,
      resumeDateTime,
      sourceExchange: text(r.sourceExchange),
      pauseThresholdPrice: text(r.pauseThresholdPrice),
      publishDate: r.publishDate,
      haltAtMs: suspensionInstant(haltDateTime, haltDate, haltTime, tz),
      resumeAtMs: suspensionInstant(resumeDateTime, resumeDate, resumeTime, tz),
      publishAtMs,
    } satisfies SuspensionRecord;
  });
}
