import { z } from 'zod';
import type { Bar, KlineType, ReadStamps } from '../domain.js';
import { isKlineType } from '../domain.js';
import { InvalidOptionError } from '../errors.js';
import { FAMILY_PREFIX, type Family } from '../markets.js';
import { MAX_BARS_PER_BATCH_GROUP } from '../plans.js';
import { KlineRecordSchema, toBars } from './kline-record.js';
import { type RequestSpec } from './request-spec.js';
import { decodeErrorFromZod } from './ret-envelope.js';

/** One `/batch-kline` group: one product and one K-line type (spec: Batch latest K-lines). */
export interface BatchKlineGroup {
  readonly code: string;
  readonly klineType: KlineType;
  /** Latest bars to return, 1 or 2; default 2 (spec: at most 2; more is cut silently, so never asked). */
  readonly count?: 1 | 2;
}

/** The key a group is checked by: `code:klineType`. */
export function groupKey(code: string, klineType: number): string {
  return `${code}:${klineType}`;
}

/** Checks groups, throwing an {@link InvalidOptionError} naming the first bad one. */
export function checkBatchKlineGroups(groups: readonly BatchKlineGroup[], maxGroups: number): void {
  if (groups.length === 0) throw new InvalidOptionError('groups', 'batchKline: "groups" must not be empty');
  if (groups.length > maxGroups) {
    throw new InvalidOptionError(
      'groups',
      `batchKline: at most ${maxGroups} groups per request on this plan, got ${groups.length}`,
    );
  }
  groups.forEach((g, i) => {
    if (typeof g.code !== 'string' || g.code === '')
      throw new InvalidOptionError(
        `groups[${i}].code`,
        `batchKline: "groups[${i}].code" must be a non-empty string, got ${JSON.stringify(g.code)}`,
      );
    if (!isKlineType(g.klineType))
      throw new InvalidOptionError(
        `groups[${i}].klineType`,
        `batchKline: "groups[${i}].klineType" must be an integer from 1 to 10, got ${JSON.stringify(g.klineType)}`,
      );
    const count = g.count ?? MAX_BARS_PER_BATCH_GROUP;
    if (count !== 1 && count !== 2)
      throw new InvalidOptionError(
        `groups[${i}].count`,
        `batchKline: "groups[${i}].count" must be 1 or 2, got ${JSON.stringify(g.count)}`,
      );
  });
}

/** Builds the `POST {family}/batch-kline` request: the token alone in the query string, the rest a JSON body. */
export function buildBatchKlineRequest(
  groups: readonly BatchKlineGroup[],
  family: Family,
  trace: string,
  maxGroups: number,
): RequestSpec {
  checkBatchKlineGroups(groups, maxGroups);
  const body = {
    trace,
    data: {
      data_list: groups.map((g) => ({
        code: g.code,
        kline_type: g.klineType,
        kline_timestamp_end: 0,
        query_kline_num: g.count ?? MAX_BARS_PER_BATCH_GROUP,
        adjust_type: 0,
      })),
    },
  };
  return {
    endpoint: 'batch-kline',
    method: 'POST',
    path: `${FAMILY_PREFIX[family]}/batch-kline`,
    query: {},
    body: JSON.stringify(body),
    trace,
    asked: groups.map((g) => groupKey(g.code, g.klineType)),
  };
}

/** `data` of a `/batch-kline` response. */
export const BatchKlineDataSchema = z.object({
  kline_list: z.array(
    z.object({
      code: z.string(),
      kline_type: z.number().int().min(1).max(10),
      kline_data: z.array(KlineRecordSchema),
    }),
  ),
});

/** The latest bars of one group. */
export interface BatchKlineGroupResult {
  readonly code: string;
  readonly klineType: KlineType;
  /** Oldest first (the last one is usually the bar still forming). */
  readonly bars: readonly Bar[];
}

/**
 * Decodes `data` of a `/batch-kline` response: validated by zod, converted in a plain loop.
 *
 * @param data - the `data` field of the response envelope.
 * @param stamps - when the request was sent and its answer arrived (the client's clock); every bar carries them.
 * @example
 * ```ts
 * const groups = decodeBatchKlineData(envelope.data, { readAtMs: sentAtMs, receivedAtMs: clock.now() });
 * ```
 */
export function decodeBatchKlineData(data: unknown, stamps: ReadStamps): BatchKlineGroupResult[] {
  const parsed = BatchKlineDataSchema.safeParse(data);
  if (!parsed.success) throw decodeErrorFromZod('batch-kline', parsed.error);
  const list = parsed.data.kline_list;
  const out: BatchKlineGroupResult[] = new Array<BatchKlineGroupResult>(list.length);
  for (let i = 0; i < list.length; i++) {
    const g = list[i]!;
    const klineType = g.kline_type as KlineType;
    out[i] = {
      code: g.code,
      klineType,
      bars: toBars(
        g.kline_data,
        g.code,
        klineType,
        'batch-kline',
        `data.kline_list[${i}].kline_data`,
        stamps,
      ),
    };
  }
  return out;
}
