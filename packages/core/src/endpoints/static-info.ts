import { z } from 'zod';
import type { StaticInfo } from '../domain.js';
import { DecodeError } from '../errors.js';
import { checkCodeList } from '../internal/check-code-list.js';
import { FAMILY_PREFIX } from '../markets.js';
import { type RequestSpec } from './request-spec.js';
import { decodeErrorFromZod } from './ret-envelope.js';

/** Builds the `GET /quote-stock-b-api/static_info` request (stock family only, spec). */
export function buildStaticInfoRequest(
  codes: readonly string[],
  trace: string,
  maxCodes: number,
): RequestSpec {
  checkCodeList(codes, maxCodes, 'staticInfo');
  const query = { trace, data: { symbol_list: codes.map((code) => ({ code })) } };
  return {
    endpoint: 'static-info',
    method: 'GET',
    path: `${FAMILY_PREFIX.stock}/static_info`,
    query: { query: JSON.stringify(query) },
    body: undefined,
    trace,
    asked: [...codes],
  };
}

const opt = z.union([z.string(), z.number()]).nullish();

/** `data` of a `/static_info` response; every record field is an optional string (spec). */
export const StaticInfoDataSchema = z.object({
  static_info_list: z.array(
    z.object({
      symbol: z.string().optional(),
      board: opt,
      bps: opt,
      circulating_shares: opt,
      currency: opt,
      dividend_yield: opt,
      eps: opt,
      eps_ttm: opt,
      exchange: opt,
      hk_shares: opt,
      lot_size: opt,
      name_cn: opt,
      name_en: opt,
      name_hk: opt,
      total_shares: opt,
    }),
  ),
});

function str(v: string | number | null | undefined): string | undefined {
  return v == null || v === '' ? undefined : String(v);
}

/** Decodes `data` of a `/static_info` response; absent, null and empty values become `undefined`. */
export function decodeStaticInfoData(data: unknown): StaticInfo[] {
  const parsed = StaticInfoDataSchema.safeParse(data);
  if (!parsed.success) throw decodeErrorFromZod('static-info', parsed.error);
  return parsed.data.static_info_list.map((r, i) => {
    if (r.symbol === undefined || r.symbol === '')
      throw new DecodeError('static-info', `data.static_info_list[${i}].symbol`, 'a record without a symbol');
    return {
      type: 'static-info',
      code: r.symbol,
      board: str(r.board),
      bps: str(r.bps),
      circulatingShares: str(r.circulating_shares),
      currency: str(r.currency),
      dividendYield: str(r.dividend_yield),
      eps: str(r.eps),
      epsTtm: str(r.eps_ttm),
      exchange: str(r.exchange),
      hkShares: str(r.hk_shares),
      lotSize: str(r.lot_size),
      nameCn: str(r.name_cn),
      nameEn: str(r.name_en),
      nameHk: str(r.name_hk),
      totalShares: str(r.total_shares),
    } satisfies StaticInfo;
  });
}
