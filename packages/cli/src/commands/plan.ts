import { Option, type Command } from 'commander';
import type { DailyBudget, Plan, PlanLimitOverrides } from '@quoteflow/core';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { codeList, intAtLeast } from '../internal/parse-args.js';
import {
  addKlineTypesOptions,
  klineTypesFlag,
  resolveKlineTypes,
  type KlineTypesFlags,
} from '../internal/kline-types-options.js';
import { PLAN_CHOICES } from '../internal/choices.js';
import { snakeCaseJson } from '../internal/snake-case-json.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';
import { limitOption } from '../internal/limit-option.js';

interface PlanFlags extends KlineTypesFlags {
  codes?: string[];
  codesFile?: string;
  bars: number;
  depthCodes?: string[];
  depthIntervalMs?: number;
  plan?: Plan;
  limit?: string[];
  format: 'table' | 'json';
}

/** `quoteflow plan`: offline, what a plan allows for a universe, from the limit table the scheduler enforces. */
export function registerPlanCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('plan')
    .summary('offline: does a universe fit the plan (no requests sent)')
    .description(
      'Answers before a single request is sent what the plan allows for a universe: /kline requests and time to ' +
        'backfill, the refresh period of every series when live, the share of the daily budget, and the smallest ' +
        'plan that fits. The numbers come from the limit table the scheduler enforces.',
    );
  addCodesOptions(cmd, 'K-line product codes');
  addKlineTypesOptions(cmd)
    .requiredOption('--bars <n>', 'closed bars of history per series', intAtLeast(0))
    .option('--depth-codes <list>', 'codes polled through /depth-tick, comma-separated', codeList)
    .option('--depth-interval-ms <ms>', 'wanted depth poll interval', intAtLeast(1))
    .addOption(
      new Option('--plan <plan>', 'plan to check (env QUOTEFLOW_PLAN; default free)').choices(PLAN_CHOICES),
    )
    .addOption(limitOption())
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: PlanFlags) => {
      const klineTypes = resolveKlineTypes(flags);
      const codes = await resolveCodes(flags, ctx.io.cwd);
      const { checkKlineTypes } = await import('../internal/check-kline-types.js');
      checkKlineTypes(codes, klineTypes, klineTypesFlag(flags));
      const planText = flags.plan ?? ctx.io.env['QUOTEFLOW_PLAN'] ?? 'free';
      if (!(PLAN_CHOICES as readonly string[]).includes(planText)) {
        throw new UsageError(
          `QUOTEFLOW_PLAN must be one of ${PLAN_CHOICES.join(', ')}, got ${JSON.stringify(planText)}`,
        );
      }
      const plan = planText as Plan;
      const { resolveLimitOverrides } = await import('../internal/limit-overrides.js');
      const limits = resolveLimitOverrides(flags.limit, ctx.io.env, plan);
      const universe = {
        codes,
        klineTypes,
        bars: flags.bars,
        ...(flags.depthCodes === undefined ? {} : { depthCodes: flags.depthCodes }),
        ...(flags.depthIntervalMs === undefined ? {} : { depthIntervalMs: flags.depthIntervalMs }),
      };
      // Loaded here, not at start: only the planner in core, not the pipelines' sinks.
      const [{ PLANS }, { estimatePlan, smallestFittingPlan }, { renderPlanReport }] = await Promise.all([
        import('@quoteflow/core'),
        import('@quoteflow/core/internal'),
        import('../internal/render-plan-report.js'),
      ]);
      // The overrides tighten the token's own plan; the other plans are shown as they are.
      const estimate = estimatePlan(plan, universe, limits);
      const all = PLANS.map((p) => (p === plan ? estimate : estimatePlan(p, universe)));
      const smallest = smallestFittingPlan(universe);
      const today = await budgetToday(ctx.io.env, plan, limits);
      if (flags.format === 'json') {
        // How the token's budget stands today (QUOTEFLOW_TOKEN set), else null.
        const todayJson =
          today === undefined
            ? null
            : {
                used: today.used,
                limit: today.limit,
                spent: today.spent,
                resetsAt: isoOrNull(today.resetsAtMs),
              };
        const doc = { plan, estimate, smallestPlan: smallest, plans: all, today: todayJson };
        ctx.out(`${toJson(snakeCaseJson(doc), 2)}\n`);
        return;
      }
      ctx.out(renderPlanReport(estimate, codes.length, klineTypes.length, smallest, all, limits));
      if (today !== undefined) {
        const { describeBudgetToday } = await import('../internal/daily-budget-watch.js');
        ctx.out(`\ntoday: ${describeBudgetToday(today, Date.now())}\n`);
      }
    });
}

/**
 * With `QUOTEFLOW_TOKEN` set, how the token's daily budget stands on this machine (the state
 * directory's count, no request); `undefined` without a token.
 */
async function budgetToday(
  env: Readonly<Record<string, string | undefined>>,
  plan: Plan,
  overrides: PlanLimitOverrides,
): Promise<DailyBudget | undefined> {
  const token = env['QUOTEFLOW_TOKEN']?.trim();
  if (token === undefined || token === '') return undefined;
  const [{ planLimits }, { tokenBudgetToday }] = await Promise.all([
    import('@quoteflow/core'),
    import('../internal/daily-budget-watch.js'),
  ]);
  return tokenBudgetToday(token, planLimits(plan, overrides), env);
}

const isoOrNull = (ms: number | undefined): string | null =>
  ms === undefined ? null : new Date(ms).toISOString();
