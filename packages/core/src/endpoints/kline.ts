import { z } from 'zod';
import type { Bar, KlineType, ReadStamps } from '../domain.js';
import { isKlineType } from '../domain.js';
import { InvalidOptionError } from '../errors.js';
import { FAMILY_PREFIX, type Family } from '../markets.js';
import { MAX_KLINE_PER_REQUEST } from '../plans.js';
import { KlineRecordSchema, toBars } from './kline-record.js';
import { ACCEPT_JSON, type RequestSpec } from './request-spec.js';
import { decodeErrorFromZod } from './ret-envelope.js';

/** One `/kline` query: up to 500 bars of one code and type, backwards from `endMs` (or the latest). */
export interface KlineQuery {
  readonly code: string;
  readonly klineType: KlineType;
  /** Bars to return, 1 to 500 (spec: up to 500 per request; more is cut silently, so never asked). */
  readonly count: number;
  /**
   * Query backwards from this instant (epoch ms); `undefined` or 0 = from the latest trading day.
   * Only forex, precious metals and crypto accept it (spec: `kline_timestamp_end`).
   */
  readonly endMs?: number | undefined;
}

/** Headers of a `/kline` request. */
export const KLINE_HEADERS = ACCEPT_JSON;

/** Checks a {@link KlineQuery}, throwing an {@link InvalidOptionError} that names the bad field. */
export function checkKlineQuery(q: KlineQuery, what = 'kline'): void {
  if (typeof q.code !== 'string' || q.code === '')
    throw new InvalidOptionError(
      'code',
      `${what}: "code" must be a non-empty string, got ${JSON.stringify(q.code)}`,
    );
  if (!isKlineType(q.klineType))
    throw new InvalidOptionError(
      'klineType',
      `${what}: "klineType" must be an integer from 1 to 10, got ${JSON.stringify(q.klineType)}`,
    );
  if (!Number.isInteger(q.count) || q.count < 1 || q.count > MAX_KLINE_PER_REQUEST) {
    throw new InvalidOptionError(
      'count',
      `${what}: "count" must be an integer from 1 to ${MAX_KLINE_PER_REQUEST} (the service cuts larger requests silently; page with klineHistory), got ${JSON.stringify(q.count)}`,
    );
  }
  if (q.endMs !== undefined && (!Number.isFinite(q.endMs) || q.endMs < 0)) {
    throw new InvalidOptionError(
      'endMs',
      `${what}: "endMs" must be an epoch-ms instant or 0, got ${JSON.stringify(q.endMs)}`,
    );
  }
}

/** `kline_timestamp_end` for `endMs`: Unix seconds like the K-line timestamps (provider-facts.md), 0 = latest. */
export function klineTimestampEnd(endMs: number | undefined): number {
  return endMs === undefined || endMs === 0 ? 0 : Math.floor(endMs / 1000);
}

/** Builds the `GET {family}/kline` request: `query` is the JSON the spec describes, `trace` unique. */
export function buildKlineRequest(q: KlineQuery, family: Family, trace: string): RequestSpec {
  checkKlineQuery(q);
  const query = {
    trace,
    data: {
      code: q.code,
      kline_type: q.klineType,
      kline_timestamp_end: klineTimestampEnd(q.endMs),
      query_kline_num: q.count,
      adjust_type: 0,
    },
  };
  return {
    endpoint: 'kline',
    method: 'GET',
    path: `${FAMILY_PREFIX[family]}/kline`,
    query: { query: JSON.stringify(query) },
    body: undefined,
    trace,
    asked: [`${q.code}:${q.klineType}`],
  };
}

/** `data` of a `/kline` response (spec: Single-product historical K-lines). */
export const KlineDataSchema = z.object({
  code: z.string(),
  kline_type: z.number().int().min(1).max(10),
  kline_list: z.array(KlineRecordSchema),
});

/** The decoded `data` of a `/kline` response. */
export interface KlineResult {
  readonly code: string;
  readonly klineType: KlineType;
  /** Oldest first, one bar per start time. */
  readonly bars: readonly Bar[];
}

/**
 * Decodes `data` of a `/kline` response; a `DecodeError` names the first bad field's path.
 *
 * @param data - the `data` field of the response envelope.
 * @param stamps - when the request was sent and its answer arrived (the client's clock); every bar carries them.
 * @example
 * ```ts
 * const { bars } = decodeKlineData(envelope.data, { readAtMs: sentAtMs, receivedAtMs: clock.now() });
 * ```
 */
export function decodeKlineData(data: unknown, stamps: ReadStamps): KlineResult {
  const parsed = KlineDataSchema.safeParse(data);
  if (!parsed.success) throw decodeErrorFromZod('kline', parsed.error);
  const d = parsed.data;
  const klineType = d.kline_type as KlineType;
  return {
    code: d.code,
    klineType,
    bars: toBars(d.kline_list, d.code, klineType, 'kline', 'data.kline_list', stamps),
  };
}
