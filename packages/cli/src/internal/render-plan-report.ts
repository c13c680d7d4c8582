import { planLimits, type Plan, type PlanLimitOverrides } from '@quoteflow/core';
import { formatDuration, type PlanEstimate } from '@quoteflow/core/internal';
import { renderTable } from './render-table.js';

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
  overrides: PlanLimitOverrides = {},
): string {
  const limits = planLimits(e.plan, overrides);
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
  const count = (n: number): string => n.toLocaleString('en-US');
  rows.push([
    'daily budget',
    `${pct(e.dailyShareByCalendar)} live by the calendar (${count(e.live.requestsPerDayByCalendar)} of ${count(limits.perDay)} requests on the busiest day; ` +
      `polling every series all day: ${count(e.live.requestsPerDay)}, so ${count(e.live.requestsSavedPerDay)} saved)`,
  ]);
  if (e.backfill.shortSeries > 0) {
    rows.push([
      'note',
      `${e.backfill.shortSeries} series cannot page back (only forex, precious metals and crypto can): at most ${e.backfill.maxBarsWithoutPaging} closed bars each`,
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
    { header: 'daily share', value: (r) => pct(r.dailyShareByCalendar), align: 'right' },
  ]);
  const markets =
    e.live.markets.length < 2 && e.live.markets.every((m) => m.tradingShare === 1)
      ? ''
      : `\nlive polling by market (close-aware: a closed market's series cost no request)\n${renderTable(
          e.live.markets,
          [
            { header: 'market', value: (m) => m.market },
            { header: 'series', value: (m) => String(m.series), align: 'right' },
            { header: 'trades', value: (m) => `${pct(m.tradingShare)} of the week`, align: 'right' },
            {
              header: 'refresh while trading',
              value: (m) => formatDuration(m.refreshWhileTradingMs),
              align: 'right',
            },
          ],
        )}`;
  return `${summary}${markets}\n${table}`;
}
