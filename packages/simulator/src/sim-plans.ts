/**
 * The simulator's own copy of the spec's Limits section (it never imports core, so a mistake in
 * core's table shows up as a refusal here instead of being shared).
 */

/** The service's plans (spec, Limits › Plans), with the contract's names. */
export const SIM_PLANS = ['free', 'basic', 'premium', 'professional', 'all-hk', 'all-cn', 'all-us'] as const;
export type SimPlan = (typeof SIM_PLANS)[number];

/** Endpoint kinds as the limit tables name them. */
export const SIM_ENDPOINTS = ['suspension', 'static-info', 'depth-tick', 'kline', 'batch-kline'] as const;
export type SimEndpoint = (typeof SIM_ENDPOINTS)[number];

/** One sliding-window rule: at most `limit` arrivals in any window of `windowMs` (arrivals in (t-windowMs, t]). */
export interface SimWindowRule {
  /** Stable id, reported as the refusing rule in the request log. */
  readonly id: string;
  /** `all` counts every request of the token; otherwise only that endpoint's. */
  readonly scope: 'all' | SimEndpoint;
  readonly windowMs: number;
  readonly limit: number;
}

/** Every limit of one plan. */
export interface SimPlanLimits {
  readonly plan: SimPlan;
  readonly rules: readonly SimWindowRule[];
  /** Requests per calendar day, all endpoints; resets at midnight of the configured zone. */
  readonly perDay: number;
  /** Groups per `/batch-kline` request (more → ret 605). */
  readonly batchKlineGroups: number;
  /** Codes per `/depth-tick` and `/static_info` request (more → silently cut to the first N). */
  readonly codesPerRequest: number;
}

interface Row {
  combined: [limit: number, windowMs: number];
  perMinute: number;
  perDay: number;
  endpoint: [limit: number, windowMs: number];
  batchIntervalMs: number;
  batchGroups: number;
  codesPerRequest: number;
}

const PRO: Row = {
  combined: [20, 1_000], // "up to 20 per second"
  perMinute: 1_200,
  perDay: 1_728_000,
  endpoint: [20, 1_000],
  batchIntervalMs: 1_000,
  batchGroups: 500,
  codesPerRequest: 50,
};

// Spec › Limits › "Combined limits" and "Per-endpoint request rate", row by row; codes per
// request from provider-facts.md (Free 5, others "up to 50 recommended").
const ROWS: Readonly<Record<SimPlan, Row>> = {
  free: {
    combined: [1, 10_000], // "only one interface request every 10 s"
    perMinute: 10,
    perDay: 1_000,
    endpoint: [1, 10_000], // "one request every 10 s"
    batchIntervalMs: 10_000,
    batchGroups: 10,
    codesPerRequest: 5,
  },
  basic: {
    combined: [1, 1_000], // "only one interface request in the same second"
    perMinute: 60,
    perDay: 86_400,
    endpoint: [1, 1_000],
    batchIntervalMs: 3_000,
    batchGroups: 100,
    codesPerRequest: 50,
  },
  premium: {
    combined: [10, 1_000],
    perMinute: 600,
    perDay: 864_000,
    endpoint: [10, 1_000],
    batchIntervalMs: 2_000,
    batchGroups: 200,
    codesPerRequest: 50,
  },
  professional: PRO,
  'all-hk': PRO,
  'all-cn': PRO,
  'all-us': PRO,
};

/** Suspension endpoints: one request per minute per token, across the three exchanges. */
export const SUSPENSION_INTERVAL_MS = 60_000;
/** K-lines per `/kline` request (more are cut silently). */
export const SIM_MAX_KLINE_NUM = 500;
/** K-lines per `/batch-kline` group (more are cut silently). */
export const SIM_MAX_BATCH_BARS = 2;

/** Overrides for one token's plan (for example a conservative Free with 5 batch groups). */
export interface SimPlanOverrides {
  readonly batchKlineGroups?: number;
  readonly codesPerRequest?: number;
  readonly perDay?: number;
}

/**
 * The limits of `plan` as the simulator enforces them.
 * @example simPlanLimits('basic').batchKlineGroups // 100
 */
export function simPlanLimits(plan: SimPlan, overrides: SimPlanOverrides = {}): SimPlanLimits {
  const row = ROWS[plan];
  if (row === undefined)
    throw new RangeError(`unknown plan ${JSON.stringify(plan)}; expected one of ${SIM_PLANS.join(', ')}`);
  const rules: SimWindowRule[] = [
    { id: 'combined', scope: 'all', limit: row.combined[0], windowMs: row.combined[1] },
    { id: 'per-minute', scope: 'all', limit: row.perMinute, windowMs: 60_000 },
    { id: 'static-info-rate', scope: 'static-info', limit: row.endpoint[0], windowMs: row.endpoint[1] },
    { id: 'depth-tick-rate', scope: 'depth-tick', limit: row.endpoint[0], windowMs: row.endpoint[1] },
    { id: 'kline-rate', scope: 'kline', limit: row.endpoint[0], windowMs: row.endpoint[1] },
    { id: 'batch-kline-interval', scope: 'batch-kline', limit: 1, windowMs: row.batchIntervalMs },
    { id: 'suspension-interval', scope: 'suspension', limit: 1, windowMs: SUSPENSION_INTERVAL_MS },
  ];
  return {
    plan,
    rules,
    perDay: overrides.perDay ?? row.perDay,
    batchKlineGroups: overrides.batchKlineGroups ?? row.batchGroups,
    codesPerRequest: overrides.codesPerRequest ?? row.codesPerRequest,
  };
}

/** Whether `plan` covers products of stock market `market` (undefined = general family). */
export function planCovers(plan: SimPlan, market: 'US' | 'HK' | 'SH' | 'SZ' | undefined): boolean {
  switch (plan) {
    case 'all-hk':
      return market === 'HK';
    case 'all-cn':
      return market === 'SH' || market === 'SZ';
    case 'all-us':
      return market === 'US';
    default:
      return true;
  }
}
