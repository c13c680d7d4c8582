import { Option, type Command } from 'commander';
import type { YesterdayClose } from '@quoteflow/operators';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { renderTable } from '../internal/render-table.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { toJson } from '../internal/to-json.js';
import { yesterdayCloseJson } from '../internal/yesterday-close-json.js';

interface YesterdayCloseFlags {
  codes?: string[];
  codesFile?: string;
  baseUrl?: string;
  token?: string;
  plan?: string;
  format: 'table' | 'json';
}

/** `quoteflow yesterday-close`: previous close per code from the two newest daily bars. */
export function registerYesterdayCloseCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('yesterday-close')
    .summary('previous close per code, from daily bars')
    .description(
      'Previous close per code (spec: kline_type 8, two bars, the one with the smaller timestamp), with the latest ' +
        "price and the change against it. All codes go in /batch-kline requests packed to the plan's group cap. " +
        "Dates are the ones the bars' labels name: a bar on a day the calendar calls a holiday keeps its own date " +
        '(a warning, once per exchange and date, says the calendar disagrees with the service).',
    );
  addCodesOptions(cmd);
  addServiceOptions(cmd)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: YesterdayCloseFlags) => {
      const service = await resolveServiceOptions(flags, ctx.io.env);
      const codes = await resolveCodes(flags, ctx.io.cwd);
      const [{ yesterdayCloses }, { openClient }, { CalendarDisagreements }] = await Promise.all([
        import('@quoteflow/operators'),
        import('../internal/create-client.js'),
        import('@quoteflow/pipelines/internal'),
      ]);
      const client = await openClient(service, ctx.logger);
      try {
        const groups = await client.batchKline(
          codes.map((code) => ({ code, klineType: 8 as const, count: 2 as const })),
          { signal: ctx.signal },
        );
        const bars = groups.flatMap((g) => g.bars);
        const disagreements = new CalendarDisagreements();
        for (const bar of bars) {
          const warning = disagreements.note(bar.code, bar.klineType, bar.tsMs);
          if (warning !== undefined) ctx.logger.warn({ code: bar.code }, warning);
        }
        const closes = yesterdayCloses(bars);
        const missing = codes.filter((c) => !closes.some((y) => y.code === c));
        if (missing.length > 0) ctx.logger.warn({ codes: missing }, 'no daily bars returned for these codes');
        if (flags.format === 'json') ctx.out(`${toJson(closes.map(yesterdayCloseJson), 2)}\n`);
        else ctx.out(renderYesterdayCloses(closes));
      } finally {
        await client.close();
      }
    });
}

function renderYesterdayCloses(rows: readonly YesterdayClose[]): string {
  const num = (v: number | undefined, digits = 4): string =>
    v === undefined ? '-' : String(Number(v.toFixed(digits)));
  return renderTable(rows, [
    { header: 'code', value: (r) => r.code },
    {
      header: 'prev day',
      value: (r) => r.prevDate ?? '-',
    },
    { header: 'prev close', value: (r) => num(r.prevClose), align: 'right' },
    { header: 'latest', value: (r) => num(r.latestPrice), align: 'right' },
    { header: 'change', value: (r) => num(r.change), align: 'right' },
    {
      header: 'change %',
      value: (r) => (r.changePercent === undefined ? '-' : `${r.changePercent.toFixed(2)}%`),
      align: 'right',
    },
  ]);
}
