import { Option, type Command } from 'commander';
import type { DatasetInspection, SeriesInspection } from '@quoteflow/pipelines';
import type { CommandContext } from '../command-context.js';
import { renderTable } from '../internal/render-table.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';

interface InspectFlags {
  out: string;
  format: 'table' | 'json';
}

/** `quoteflow inspect`: what a dataset holds, from its files alone (no request, no token). */
export function registerInspectCommand(program: Command, ctx: CommandContext): void {
  program
    .command('inspect')
    .summary('what a dataset directory holds, without any request')
    .description(
      'Per (code, kline type): rows, first and last bar (ISO-8601 UTC), and the gaps between them that the market calendar does not explain (weekends, holidays, lunch breaks and the forex weekly pause are not gaps, nor a hole that a halt in the suspension records of the dataset spans); per dataset the file count. No request is made.',
    )
    .requiredOption('--out <dir>', 'dataset directory (as given to backfill/sync)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: InspectFlags) => {
      const { resolve } = await import('node:path');
      const { stat } = await import('node:fs/promises');
      const { checkOutScheme } = await import('../internal/check-out-dir.js');
      checkOutScheme(flags.out);
      const dir = resolve(ctx.io.cwd, flags.out);
      const info = await stat(dir).catch(() => undefined);
      if (info?.isDirectory() !== true) throw new UsageError(`--out ${flags.out}: no such directory`);
      const [{ inspectDataset }, { exchangeLocalTime }] = await Promise.all([
        import('@quoteflow/pipelines'),
        import('../internal/exchange-local-time.js'),
      ]);
      const inspection = await inspectDataset(dir);
      ctx.out(
        flags.format === 'json'
          ? `${toJson(inspectionJson(inspection), 2)}\n`
          : renderInspection(inspection, exchangeLocalTime),
      );
    });
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The contract's JSON: `{"datasets": {"kline": {"files", "series": [...]}, "depth": {"files"}, "suspension": {"files"}}}`. */
function inspectionJson(inspection: DatasetInspection): unknown {
  return {
    datasets: {
      kline: {
        files: inspection.kline.files,
        series: inspection.kline.series.map((s) => ({
          code: s.code,
          kline_type: s.klineType,
          rows: s.rows,
          first: iso(s.firstMs),
          last: iso(s.lastMs),
          gaps: s.gaps.map((g) => ({ from: iso(g.fromMs), to: iso(g.toMs), bars: g.bars })),
          duplicates: s.duplicates,
        })),
      },
      depth: { files: inspection.depth.files },
      suspension: { files: inspection.suspension.files },
    },
  };
}

function renderInspection(
  inspection: DatasetInspection,
  exchangeLocalTime: (ms: number, code: string) => string,
): string {
  const { kline, depth, suspension } = inspection;
  const head = `files: kline ${kline.files}, depth ${depth.files}, suspension ${suspension.files}\n`;
  if (kline.series.length === 0) return `${head}no kline series\n`;
  const table = renderTable<SeriesInspection>(kline.series, [
    { header: 'code', value: (s) => s.code },
    { header: 'kline type', value: (s) => String(s.klineType), align: 'right' },
    { header: 'rows', value: (s) => String(s.rows), align: 'right' },
    { header: 'first', value: (s) => iso(s.firstMs) },
    { header: 'last', value: (s) => iso(s.lastMs) },
    { header: 'gaps', value: (s) => String(s.gaps.length), align: 'right' },
    { header: 'missing bars', value: (s) => String(s.gaps.reduce((n, g) => n + g.bars, 0)), align: 'right' },
    { header: 'duplicates', value: (s) => String(s.duplicates), align: 'right' },
  ]);
  const gapLines = kline.series.flatMap((s) =>
    s.gaps.map(
      (g) =>
        `gap ${s.code} type ${s.klineType}: ${iso(g.fromMs)} to ${iso(g.toMs)} (${g.bars} bars; ` +
        `exchange time ${exchangeLocalTime(g.fromMs, s.code)} to ${exchangeLocalTime(g.toMs, s.code)})\n`,
    ),
  );
  return head + table + gapLines.join('');
}
