/** Request-shape validation, faithful to the service's return codes (provider-facts.md table). */

/** A refusal: the service's `ret` and `msg`. */
export interface Refusal {
  readonly ret: number;
  readonly msg: string;
}

export const RET = {
  ok: { ret: 200, msg: 'ok' },
  header: { ret: 400, msg: 'request header param invalid' },
  data: { ret: 400, msg: 'request data param invalid' },
  token: { ret: 401, msg: 'token invalid' },
  rateLimit: { ret: 429, msg: 'rate limit' },
  codeInvalid: { ret: 600, msg: 'code invalid' },
  bodyEmpty: { ret: 601, msg: 'body empty' },
  unauthorized: { ret: 604, msg: 'code unauthorized' },
  tooMany: { ret: 605, msg: 'too many requests' },
} as const satisfies Record<string, Refusal>;

/** The first-level envelope `{trace, data}`. */
export interface Envelope {
  readonly trace: string;
  readonly data: Record<string, unknown>;
}

export type Parsed<T> =
  | { readonly ok: true; readonly value: T; readonly trace: string }
  | { readonly ok: false; readonly refusal: Refusal; readonly trace: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses the JSON text of `query` (GET) or the body (POST) into `{trace, data}`. */
export function parseEnvelope(text: string | undefined): Parsed<Envelope> {
  if (text === undefined || text.trim() === '') return { ok: false, refusal: RET.bodyEmpty, trace: '' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, refusal: RET.header, trace: '' };
  }
  if (!isObject(json)) return { ok: false, refusal: RET.header, trace: '' };
  const trace = typeof json['trace'] === 'string' ? json['trace'] : '';
  if (Object.keys(json).length === 0) return { ok: false, refusal: RET.bodyEmpty, trace };
  if (typeof json['trace'] !== 'string' || !isObject(json['data']))
    return { ok: false, refusal: RET.header, trace };
  if (Object.keys(json['data']).length === 0) return { ok: false, refusal: RET.bodyEmpty, trace };
  return { ok: true, value: { trace, data: json['data'] }, trace };
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** One K-line query (`/kline` data, or one `/batch-kline` group). */
export interface KlineQuery {
  readonly code: string;
  readonly klineType: number;
  readonly endTs: number;
  readonly num: number;
  readonly adjustType: number;
}

/** Validates the K-line fields (all required integers; spec tables). */
export function parseKlineQuery(data: unknown): KlineQuery | undefined {
  if (!isObject(data)) return undefined;
  const { code, kline_type, kline_timestamp_end, query_kline_num, adjust_type } = data;
  if (typeof code !== 'string' || code === '') return undefined;
  if (!isInt(kline_type) || kline_type < 1 || kline_type > 10) return undefined;
  if (!isInt(kline_timestamp_end) || kline_timestamp_end < 0) return undefined;
  if (!isInt(query_kline_num) || query_kline_num < 1) return undefined;
  if (!isInt(adjust_type) || adjust_type < 0 || adjust_type > 1) return undefined;
  return {
    code,
    klineType: kline_type,
    endTs: kline_timestamp_end,
    num: query_kline_num,
    adjustType: adjust_type,
  };
}

/** Validates `data.symbol_list` (`/depth-tick`, `/static_info`): codes, or a refusal. */
export function parseSymbolList(data: Record<string, unknown>): string[] | Refusal {
  const list = data['symbol_list'];
  if (!Array.isArray(list)) return RET.data;
  if (list.length === 0) return RET.bodyEmpty;
  const codes: string[] = [];
  for (const item of list) {
    if (!isObject(item) || typeof item['code'] !== 'string' || item['code'] === '') return RET.data;
    codes.push(item['code']);
  }
  return codes;
}

/** Validates `data.data_list` (`/batch-kline`): groups, or a refusal. */
export function parseDataList(data: Record<string, unknown>): KlineQuery[] | Refusal {
  const list = data['data_list'];
  if (!Array.isArray(list)) return RET.data;
  if (list.length === 0) return RET.bodyEmpty;
  const out: KlineQuery[] = [];
  for (const item of list) {
    const q = parseKlineQuery(item);
    if (q === undefined) return RET.data;
    out.push(q);
  }
  return out;
}
