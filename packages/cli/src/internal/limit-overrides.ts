import { planLimits, type Plan, type PlanLimitOverrides } from '@quoteflow/core';
import { WINDOW_RULE_IDS } from '@quoteflow/core/internal';
import { LIMIT_SYNTAX } from './limit-option.js';
import { UsageError } from './usage-error.js';

/** The keys `--limit` takes besides the rule ids (`per-minute`, `kline-rate`, …). */
const SIZE_KEYS = {
  'per-day': 'perDay',
  'batch-kline.groups': 'batchKlineGroups',
  'codes-per-request': 'codesPerRequest',
} as const;

const UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Parses `KEY=VALUE` items (each may itself be a comma-separated list) into plan overrides; `source`
 * names where they came from in every error (`--limit`, `QUOTEFLOW_LIMITS`). Later items win.
 */
export function parseLimitOverrides(items: readonly string[], source: string): PlanLimitOverrides {
  let overrides: { -readonly [K in keyof PlanLimitOverrides]: PlanLimitOverrides[K] } = {};
  for (const item of items
    .flatMap((i) => i.split(','))
    .map((i) => i.trim())
    .filter((i) => i !== '')) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq).trim();
    const value = eq < 0 ? '' : item.slice(eq + 1).trim();
    const fail = (why: string): never => {
      throw new UsageError(`${source} ${item}: ${why}; expected ${LIMIT_SYNTAX}`);
    };
    if (key in SIZE_KEYS) {
      if (!/^\d+$/.test(value)) fail('the value must be a whole number');
      overrides = { ...overrides, [SIZE_KEYS[key as keyof typeof SIZE_KEYS]]: Number(value) };
      continue;
    }
    if (!(WINDOW_RULE_IDS as readonly string[]).includes(key))
      fail(`no limit is called ${JSON.stringify(key)}`);
    const m = /^(\d+)(?:\/(\d+)(ms|s|m|h))?$/.exec(value);
    if (m === null) fail('the value must be N or N/WINDOW, e.g. 30 or 1/2s');
    const [, limit, amount, unit] = m!;
    overrides = {
      ...overrides,
      rules: {
        ...overrides.rules,
        [key]: {
          limit: Number(limit),
          ...(amount === undefined
            ? {}
            : { windowMs: Number(amount) * UNITS_MS[unit as keyof typeof UNITS_MS] }),
        },
      },
    };
  }
  return overrides;
}

/** Both sources: the environment's overrides, then the flags' on top; checked against the plan (exit 2). */
export function resolveLimitOverrides(
  flags: readonly string[] | undefined,
  env: Readonly<Record<string, string | undefined>>,
  plan: Plan,
): PlanLimitOverrides {
  const fromEnv = parseLimitOverrides(
    env['QUOTEFLOW_LIMITS'] === undefined ? [] : [env['QUOTEFLOW_LIMITS']],
    'QUOTEFLOW_LIMITS',
  );
  const fromFlags = parseLimitOverrides(flags ?? [], '--limit');
  const overrides = mergeLimitOverrides(fromEnv, fromFlags);
  checkLimitOverrides(
    overrides,
    plan,
    flags !== undefined && flags.length > 0 ? '--limit' : 'QUOTEFLOW_LIMITS',
  );
  return overrides;
}

/** `over` on top of `under`, rule by rule. */
export function mergeLimitOverrides(under: PlanLimitOverrides, over: PlanLimitOverrides): PlanLimitOverrides {
  return { ...under, ...over, rules: { ...under.rules, ...over.rules } };
}

/** Overrides that would loosen the plan are a usage error naming `source`. */
export function checkLimitOverrides(overrides: PlanLimitOverrides, plan: Plan, source: string): void {
  try {
    planLimits(plan, overrides);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`${source}: ${err.message}`);
    throw err;
  }
}
