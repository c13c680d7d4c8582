import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import { addCodesOptions } from '../internal/codes-options.js';
import { UsageError } from '../internal/usage-error.js';

interface ReportFlags {
  codes?: string[];
  codesFile?: string;
  out: string;
  html: string;
  from?: string;
  to?: string;
}

/** `quoteflow report`: one self-contained HTML page of a dataset (no request, no token). */
export function registerReportCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('report')
    .summary('one self-contained HTML page of a dataset: coverage, bars, summary')
    .description(
      'Writes one HTML file that opens offline from disk (the chart library and the data are inside it): a coverage ' +
        'heatmap of series × time, one panel per kline type over its own bars (held, market closed by the calendar, ' +
        'missing; click a row to open its bars), ' +
        "candlesticks with volume and the gaps marked, requests per minute scaled to the use with the plan's limit " +
        'marked (with a request log), and a summary table (rows, first/last bar, gaps, last read, ' +
        'freshness). Reads the dataset only: no request is made. Candles are carried for the first 50 series; name ' +
        'the ones you want with --codes (a code the dataset does not hold is exit 2). Each heatmap cell and candle ' +
        "follows the series' own bar period; a series longer than 5,000 bars shows its newest 5,000 as candles. " +
        "With --from/--to, a gap that crosses the window's edge counts its bars inside the window.",
    )
    .requiredOption('--out <dir>', 'dataset directory or s3://bucket/prefix (as given to backfill/sync)')
    .requiredOption('--html <file>', 'the HTML file to write')
    .option('--from <time>', 'bars starting at or after this ISO-8601 time (UTC unless it says)')
    .option('--to <time>', 'bars starting before this ISO-8601 time');
  addCodesOptions(cmd, 'only these product codes').action(async (flags: ReportFlags) => {
    const { openOutForReading } = await import('../internal/check-out-dir.js');
    const copy = await openOutForReading(flags.out, ctx.io.cwd);
    try {
      await writeReport(flags, copy.dir);
    } finally {
      await copy.close();
    }
  });
  async function writeReport(flags: ReportFlags, dir: string): Promise<void> {
    const { resolve } = await import('node:path');
    const fromMs = timeFlag('--from', flags.from);
    const toMs = timeFlag('--to', flags.to);
    if (fromMs !== undefined && toMs !== undefined && toMs <= fromMs)
      throw new UsageError(`--to ${flags.to} is not after --from ${flags.from}`);
    const html = resolve(ctx.io.cwd, flags.html);
    const [{ resolveCodes }, { checkOutDir }, { writeFileDurably }, { collectReportData, renderReport }] =
      await Promise.all([
        import('../internal/codes-options.js'),
        import('../internal/check-out-dir.js'),
        import('@quoteflow/core/internal'),
        import('@quoteflow/report'),
      ]);
    const codes =
      flags.codes === undefined && flags.codesFile === undefined
        ? undefined
        : await resolveCodes(flags, ctx.io.cwd);
    const { dirname } = await import('node:path');
    await checkOutDir(dirname(html), ctx.io.cwd, '--html');
    const data = await collectReportData(dir, {
      ...(codes === undefined ? {} : { codes }),
      ...(fromMs === undefined ? {} : { fromMs }),
      ...(toMs === undefined ? {} : { toMs }),
    });
    // A code asked for that the dataset does not hold is a mistake to name, not an empty page.
    const held = new Set(data.summary.map((row) => row.code));
    const absent = (codes ?? []).filter((code) => !held.has(code));
    if (absent.length > 0)
      throw new UsageError(
        `--codes ${absent.join(',')}: the dataset under ${flags.out} holds no bars of ${absent.length === 1 ? 'this code' : 'these codes'}` +
          (fromMs === undefined && toMs === undefined ? '' : ' between --from and --to') +
          ' (quoteflow inspect --out DIR lists what it holds)',
      );
    // The page's directory is made like --out's (checked writable above); written aside and
    // renamed, so a reader never opens half a page.
    await writeFileDurably(html, await renderReport(data));
    ctx.logger.info({ html, series: data.summary.length }, 'report written');
    ctx.out(`${html}: ${data.summary.length} series\n`);
  }
}

function timeFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) || !value.includes('T') ? value : `${value}Z`);
  if (!Number.isFinite(ms))
    throw new UsageError(`${flag} ${value}: not an ISO-8601 time (e.g. 2026-11-02T00:00Z)`);
  return ms;
}
