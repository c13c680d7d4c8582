import { Option, type Command } from 'commander';
import type { Clock, Plan, PlanLimitOverrides } from '@quoteflow/core';
import { limitOption } from './limit-option.js';
import { PLAN_CHOICES as PLANS } from './choices.js';
import { UsageError } from './usage-error.js';

/** Where and as whom a command talks to the service. */
export interface ServiceOptions {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  /** `--limit` / `QUOTEFLOW_LIMITS`: the plan's limits, tightened (empty: the plan's own). */
  readonly limits: PlanLimitOverrides;
  /** Test-only: the accelerated clock of `QF_TEST_CLOCK` (`test-clock.ts`), else the system clock. */
  readonly testClock?: Clock;
  /** `--exit-when-budget-spent`: a spent daily budget ends the command (exit 75) instead of a wait. */
  readonly exitWhenBudgetSpent?: boolean;
}

/** Adds `--base-url`, `--token` and `--plan` (contract.md: every command that calls the service). */
export function addServiceOptions(cmd: Command): Command {
  return cmd
    .option('--base-url <url>', 'service base address (env QUOTEFLOW_BASE_URL; required)')
    .option('--token <token>', 'subscription token (env QUOTEFLOW_TOKEN; required; never printed)')
    .addOption(
      new Option('--plan <plan>', 'plan of the token (env QUOTEFLOW_PLAN; default free)').choices(PLANS),
    )
    .addOption(limitOption())
    .option(
      '--exit-when-budget-spent',
      "when the token's daily budget is spent, exit 75 instead of waiting for its reset (for batch jobs)",
    );
}

/**
 * Flags win over the environment; a missing or malformed value is a usage error naming flag and
 * variable. Async only to load the limit checks (and core) after start-up, not for `--help`.
 */
export async function resolveServiceOptions(
  opts: { baseUrl?: string; token?: string; plan?: string; limit?: string[]; exitWhenBudgetSpent?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): Promise<ServiceOptions> {
  const baseUrl = opts.baseUrl ?? nonEmpty(env['QUOTEFLOW_BASE_URL']);
  if (baseUrl === undefined) throw new UsageError('--base-url is required (or set QUOTEFLOW_BASE_URL)');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (url.search !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(
      '--base-url must not carry a query string or credentials; pass the token with --token',
    );
  }
  const token = opts.token ?? nonEmpty(env['QUOTEFLOW_TOKEN']);
  if (token === undefined || token === '')
    throw new UsageError('--token is required (or set QUOTEFLOW_TOKEN)');
  const planText = opts.plan ?? nonEmpty(env['QUOTEFLOW_PLAN']) ?? 'free';
  if (!(PLANS as readonly string[]).includes(planText)) {
    throw new UsageError(
      `--plan (or QUOTEFLOW_PLAN) must be one of ${PLANS.join(', ')}, got ${JSON.stringify(planText)}`,
    );
  }
  const plan = planText as Plan;
  const [{ resolveLimitOverrides }, { testClockOf }] = await Promise.all([
    import('./limit-overrides.js'),
    import('./test-clock.js'),
  ]);
  const testClock = testClockOf(env);
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    token,
    plan,
    limits: resolveLimitOverrides(opts.limit, env, plan),
    ...(testClock === undefined ? {} : { testClock }),
    exitWhenBudgetSpent: opts.exitWhenBudgetSpent === true,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * Every token the command line or environment might carry, found before parsing so that even a
 * usage error cannot echo one.
 */
export function tokensInArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const found: string[] = [];
  argv.forEach((arg, i) => {
    if (arg === '--token') {
      const next = argv[i + 1];
      if (next !== undefined) found.push(next);
    } else if (arg.startsWith('--token=')) found.push(arg.slice('--token='.length));
  });
  const fromEnv = env['QUOTEFLOW_TOKEN'];
  if (fromEnv !== undefined) found.push(fromEnv, fromEnv.trim());
  return found;
}
