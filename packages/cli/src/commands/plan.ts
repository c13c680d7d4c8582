import { Option, type Command } from 'commander';
import { PLANS, planLimits, type KlineType, type Plan } from '@quoteflow/core';
import { estimatePlan, formatDuration, smallestFittingPlan, type PlanEstimate } from '@quoteflow/pipelines';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { codeList, intAtLeast, klineTypeList } from '../internal/parse-args.js';
import { renderTable } from '../internal/render-table.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';

interface PlanFlags {
  codes?: string[];
  codesFile?: string;
  klineTypes: KlineType[];
  bars: number;
  depthCodes?: string[];
  depthIntervalMs?: number;
  plan?: Plan;
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
  cmd
    .requiredOption('--kline-types <list>', 'kline types 1-10, comma-separated', klineTypeList)
    .requiredOption('--bars <n>', 'closed bars of history per series', intAtLeast(0))
    .option('--depth-codes <list>', 'codes polled through /depth-tick, comma-separated', codeList)
    .option('--depth-interval-ms <ms>', 'wanted depth poll interval', intAtLeast(1))
    .addOption(new Option('--plan <plan>', 'plan to check (env QUOTEFLOW_PLAN; default free)').choices(PLANS))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: PlanFlags) => {
      const codes = await resolveCodes(flags, ctx.io.cwd);
      const planText = flags.plan ?? ctx.io.env['QUOTEFLOW_PLAN'] ?? 'free';
      if (!(PLANS as readonly string[]).includes(planText)) {
        throw new UsageError(
          `QUOTEFLOW_PLAN must be one of ${PLANS.join(', ')}, got ${JSON.stringify(planText)}`,
        );
      }
      const plan = planText as Plan;
      const universe = {
        codes,
        klineTypes: flags.klineTypes,
        bars: flags.bars,
        ...(flags.depthCodes === undefined ? {} : { depthCodes: flags.depthCodes }),
        ...(flags.depthIntervalMs === undefined ? {} : { depthIntervalMs: flags.depthIntervalMs }),
      };
      const estimate = estimatePlan(plan, universe);
      const all = PLANS.map((p) => estimatePlan(p, universe));
      const smallest = smallestFittingPlan(universe);
      if (flags.format === 'json') {
        ctx.out(`${toJson({ plan, estimate, smallestPlan: smallest ?? null, plans: all }, 2)}\n`);
        return;
      }
      ctx.out(renderPlanReport(estimate, codes.length, flags.klineTypes.length, smallest, all));
    });
}

function pct(share: number): string {
  return `${(share * 100).toFixed(share < 0.001 && share > 0 ? 3 : 1)}%`;
}

/** The table a person reads: the chosen plan in detail, then every plan side by side. */
export function renderPlanReport(
  e: PlanEstimate,
  nCodes: number,
  nTypes: number,
  smallest: Plan | undefined,
  all: readonly PlanEstimate[],
): string {
  const limits = planLimits(e.plan);
  const rows: [string, string][] = [
    ['plan', `${e.plan}: ${e.fits ? 'fits' : 'does not fit'}`],
    ['series', `${e.series} (${nCodes} codes × ${nTypes} kline types)`],
    [
      'backfill',
      `${e.backfill.requests} /kline requests, at least ${formatDuration(e.backfill.durationMs)} (${pct(e.backfillDailyShare)} of a day's budget)`,
    ],
    [
      'refresh period',
      `${formatDuration(e.live.refreshPeriodMs)} per series (${e.live.batchRequestsPerCycle} /batch-kline requests per cycle, up to ${limits.batchKlineGroups} groups each)`,
    ],
  ];
  if (e.live.depthPeriodMs !== undefined) {
    rows.push([
      'depth period',
      `${formatDuration(e.live.depthPeriodMs)} (${e.live.depthRequestsPerPoll} /depth-tick requests per poll)`,
    ]);
  }
  rows.push([
    'daily budget',
    `${pct(e.dailyShare)} live (${e.live.requestsPerDay.toLocaleString('en-US')} of ${limits.perDay.toLocaleString('en-US')} requests a day)`,
  ]);
  if (e.backfill.shortSeries > 0) {
    rows.push([
      'note',
      `${e.backfill.shortSeries} stock series cannot page back: at most ${e.backfill.maxBarsWithoutPaging} closed bars each`,
    ]);
  }
  for (const reason of e.reasons) rows.push(['why not', reason]);
  rows.push(['smallest plan', smallest ?? 'none: split the universe or use fewer/longer kline types']);
  const width = Math.max(...rows.map(([k]) => k.length));
  const summary = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
  const table = renderTable(all, [
    { header: 'plan', value: (r) => r.plan },
    { header: 'fits', value: (r) => (r.fits ? 'yes' : 'no') },
    { header: 'backfill', value: (r) => formatDuration(r.backfill.durationMs), align: 'right' },
    { header: 'refresh', value: (r) => formatDuration(r.live.refreshPeriodMs), align: 'right' },
    { header: 'daily share', value: (r) => pct(r.dailyShare), align: 'right' },
  ]);
  return `${summary}\n${table}`;
}
