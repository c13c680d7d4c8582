import { Option, type Command } from 'commander';
import type { StaticInfo } from '@quoteflow/core';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions, resolveCodes } from '../internal/codes-options.js';
import { renderTable } from '../internal/render-table.js';
import { addServiceOptions, resolveServiceOptions } from '../internal/service-options.js';
import { snakeCaseJson } from '../internal/snake-case-json.js';
import { toJson } from '../internal/to-json.js';

interface StaticInfoFlags {
  codes?: string[];
  codesFile?: string;
  baseUrl?: string;
  token?: string;
  plan?: string;
  format: 'table' | 'json';
}

/** `quoteflow static-info`: batch static info of US, HK and A-share stocks. */
export function registerStaticInfoCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('static-info')
    .summary('batch static info of stock codes')
    .description(
      "Static info (names, exchange, currency, lot size, shares, EPS, BPS, dividend yield) of US, Hong Kong and A-share stocks, split to the plan's codes per request.",
    );
  addCodesOptions(cmd, 'stock codes', 'AAPL.US,700.HK,600519.SH');
  addServiceOptions(cmd)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: StaticInfoFlags) => {
      const service = await resolveServiceOptions(flags, ctx.io.env);
      const codes = await resolveCodes(flags, ctx.io.cwd);
      const { openClient } = await import('../internal/create-client.js');
      const client = await openClient(service, ctx.logger);
      try {
        const infos = await client.staticInfo(codes, { signal: ctx.signal });
        // The provider's own snake_case names (`name_en`, `lot_size`), as every JSON of quoteflow.
        if (flags.format === 'json')
          ctx.out(
            `${toJson(
              infos.map(({ type: _type, ...rest }) => snakeCaseJson(rest)),
              2,
            )}\n`,
          );
        else ctx.out(renderStaticInfo(infos));
      } finally {
        await client.close();
      }
    });
}

const dash = (v: string | undefined): string => (v === undefined || v === '' ? '-' : v);

function renderStaticInfo(infos: readonly StaticInfo[]): string {
  return renderTable(infos, [
    { header: 'code', value: (r) => r.code },
    { header: 'name', value: (r) => dash(r.nameEn ?? r.nameCn ?? r.nameHk) },
    { header: 'exchange', value: (r) => dash(r.exchange) },
    { header: 'currency', value: (r) => dash(r.currency) },
    { header: 'lot', value: (r) => dash(r.lotSize), align: 'right' },
    { header: 'total shares', value: (r) => dash(r.totalShares), align: 'right' },
    { header: 'eps ttm', value: (r) => dash(r.epsTtm), align: 'right' },
    { header: 'bps', value: (r) => dash(r.bps), align: 'right' },
    { header: 'div yield', value: (r) => dash(r.dividendYield), align: 'right' },
  ]);
}
