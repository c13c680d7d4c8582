import { z } from 'zod';

/** The service's subscription plans, in ascending order of capacity. */
export const PLANS = ['free', 'basic', 'premium', 'professional', 'all-hk', 'all-cn', 'all-us'] as const;
export type Plan = (typeof PLANS)[number];
export const PlanSchema = z.enum(PLANS);

/** Endpoint kinds as the limit table names them (family does not matter: limits follow the token). */
export const ENDPOINT_KINDS = ['suspension', 'static-info', 'depth-tick', 'kline', 'batch-kline'] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/**
 * One sliding-window rule: at most `limit` request arrivals in any window of `windowMs`.
 * `scope: 'all'` counts every request of the token; an endpoint scope counts that endpoint only.
 */
export interface WindowRule {
  readonly id: string;
  readonly scope: 'all' | EndpointKind;
  readonly windowMs: number;
  readonly limit: number;
}

/** Everything the spec's Limits section says about one plan. */
export interface PlanLimits {
  readonly plan: Plan;
  /** Sliding-window rules, every one of which must hold at every instant. */
  readonly rules: readonly WindowRule[];
  /** Requests per calendar day (all endpoints); resets at midnight of the configured time zone. */
  readonly perDay: number;
  /** Groups (code + kline type) per `/batch-kline` request. */
  readonly batchKlineGroups: number;
  /** Codes per `/depth-tick` or `/static_info` request (provider-facts.md: Free 5, others 50). */
  readonly codesPerRequest: number;
}

/** K-lines per `/kline` request and per `/batch-kline` group (spec, Other constants). */
export const MAX_KLINE_PER_REQUEST = 500;
export const MAX_BARS_PER_BATCH_GROUP = 2;

interface PlanRow {
  /** Combined rule, all interfaces together: `limit` per `windowMs`. */
  combined: [limit: number, windowMs: number];
  perMinute: number;
  perDay: number;
  /** `/static_info`, `/depth-tick`, `/kline` each: `limit` per `windowMs`. */
  endpoint: [limit: number, windowMs: number];
  batchIntervalMs: number;
  batchGroups: number;
  codesPerRequest: number;
}

// The spec's two Limits tables, row by row.
const ROWS: Record<Plan, PlanRow> = {
  free: {
    combined: [1, 10_000],
    perMinute: 10,
    perDay: 1_000,
    endpoint: [1, 10_000],
    batchIntervalMs: 10_000,
    batchGroups: 10,
    codesPerRequest: 5,
  },
  basic: {
    combined: [1, 1_000],
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
  professional: PRO(),
  'all-hk': PRO(),
  'all-cn': PRO(),
  'all-us': PRO(),
};

function PRO(): PlanRow {
  return {
    combined: [20, 1_000],
    perMinute: 1_200,
    perDay: 1_728_000,
    endpoint: [20, 1_000],
    batchIntervalMs: 1_000,
    batchGroups: 500,
    codesPerRequest: 50,
  };
}

/** Suspension endpoints: one request per minute for every plan, across the three exchanges. */
const SUSPENSION_INTERVAL_MS = 60_000;

/** A tighter reading of one sliding-window rule: fewer requests, or the same over a longer window. */
export interface WindowRuleOverride {
  readonly limit?: number;
  readonly windowMs?: number;
}

/**
 * Overrides for conservative deployments (for example Free with 5 batch groups, or a per-minute
 * cap below the plan's for a token shared with another tool). Rate overrides may only tighten:
 * a rule's `limit` at most the plan's and its `windowMs` at least the plan's, `perDay` at most the
 * plan's; anything else is a `RangeError` naming the override.
 */
export interface PlanLimitOverrides {
  readonly batchKlineGroups?: number;
  readonly codesPerRequest?: number;
  /** Requests per day, at most the plan's. */
  readonly perDay?: number;
  /** By rule id (`combined`, `per-minute`, `kline-rate`, `batch-kline-interval`, …). */
  readonly rules?: Readonly<Record<string, WindowRuleOverride>>;
}

/** The ids of every plan's sliding-window rules (the keys of {@link PlanLimitOverrides.rules}). */
export const WINDOW_RULE_IDS = [
  'combined',
  'per-minute',
  'static-info-rate',
  'depth-tick-rate',
  'kline-rate',
  'batch-kline-interval',
  'suspension-interval',
] as const;

/**
 * The limit table of `plan`, as the scheduler enforces it and `quoteflow plan` reports it.
 * @example planLimits('basic').batchKlineGroups // 100
 */
export function planLimits(plan: Plan, overrides: PlanLimitOverrides = {}): PlanLimits {
  const row = ROWS[plan];
  if (row === undefined)
    throw new RangeError(`unknown plan ${JSON.stringify(plan)}; expected one of ${PLANS.join(', ')}`);
  const [combinedLimit, combinedWindowMs] = row.combined;
  const [endpointLimit, endpointWindowMs] = row.endpoint;
  const planRules: WindowRule[] = [
    { id: 'combined', scope: 'all', windowMs: combinedWindowMs, limit: combinedLimit },
    { id: 'per-minute', scope: 'all', windowMs: 60_000, limit: row.perMinute },
    ...(['static-info', 'depth-tick', 'kline'] as const).map((scope) => ({
      id: `${scope}-rate`,
      scope,
      windowMs: endpointWindowMs,
      limit: endpointLimit,
    })),
    { id: 'batch-kline-interval', scope: 'batch-kline', windowMs: row.batchIntervalMs, limit: 1 },
    { id: 'suspension-interval', scope: 'suspension', windowMs: SUSPENSION_INTERVAL_MS, limit: 1 },
  ];
  const rules = planRules.map((rule) => tightened(plan, rule, overrides.rules?.[rule.id]));
  for (const id of Object.keys(overrides.rules ?? {}))
    if (!planRules.some((r) => r.id === id))
      throw new RangeError(
        `plan override of rule "${id}": no such rule; the rules are ${WINDOW_RULE_IDS.join(', ')}`,
      );
  const perDay = overrides.perDay ?? row.perDay;
  if (!Number.isInteger(perDay) || perDay < 1 || perDay > row.perDay)
    throw new RangeError(
      `plan override "perDay" must be an integer from 1 to ${row.perDay} on plan ${plan}, got ${perDay}`,
    );
  const batchKlineGroups = overrides.batchKlineGroups ?? row.batchGroups;
  const codesPerRequest = overrides.codesPerRequest ?? row.codesPerRequest;
  for (const [name, value, max] of [
    ['batchKlineGroups', batchKlineGroups, row.batchGroups],
    ['codesPerRequest', codesPerRequest, Math.max(row.codesPerRequest, 50)],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new RangeError(
        `plan override "${name}" must be an integer from 1 to ${max} on plan ${plan}, got ${value}`,
      );
    }
  }
  return { plan, rules, perDay, batchKlineGroups, codesPerRequest };
}

/** The overrides that give back `limits` from their plan (to hand a client's limits on, e.g. to `estimatePlan`). */
export function limitOverridesOf(limits: PlanLimits): PlanLimitOverrides {
  return {
    batchKlineGroups: limits.batchKlineGroups,
    codesPerRequest: limits.codesPerRequest,
    perDay: limits.perDay,
    rules: Object.fromEntries(limits.rules.map((r) => [r.id, { limit: r.limit, windowMs: r.windowMs }])),
  };
}

/** `rule` read as `override` says, which may only make it stricter. */
function tightened(plan: Plan, rule: WindowRule, override: WindowRuleOverride | undefined): WindowRule {
  if (override === undefined) return rule;
  const limit = override.limit ?? rule.limit;
  const windowMs = override.windowMs ?? rule.windowMs;
  if (!Number.isInteger(limit) || limit < 1 || limit > rule.limit)
    throw new RangeError(
      `plan override of rule "${rule.id}": the limit must be an integer from 1 to ${rule.limit} on plan ${plan} (an override may only tighten), got ${limit}`,
    );
  if (!Number.isInteger(windowMs) || windowMs < rule.windowMs)
    throw new RangeError(
      `plan override of rule "${rule.id}": the window must be at least the plan's ${rule.windowMs} ms on plan ${plan} (an override may only tighten), got ${windowMs}`,
    );
  return { ...rule, limit, windowMs };
}

/**
 * The steady-state rate (requests per second) that `endpoint` can sustain under the sliding-window
 * rules of the plan that apply to it: the binding rate for utilisation figures and `quoteflow plan`.
 * The daily total is separate (`perDay`): on Free it binds over a whole day, not over minutes.
 */
export function sustainedRate(limits: PlanLimits, endpoint: EndpointKind): number {
  let rate = Number.POSITIVE_INFINITY;
  for (const rule of limits.rules) {
    if (rule.scope === 'all' || rule.scope === endpoint)
      rate = Math.min(rate, (rule.limit * 1000) / rule.windowMs);
  }
  return rate;
}
