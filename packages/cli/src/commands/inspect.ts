import { Option, type Command } from 'commander';
import type {
  DatasetInspection,
  DepthCodeInspection,
  SeriesInspection,
  SuspensionExchangeInspection,
} from '@quoteflow/pipelines';
import type { CommandContext } from '../command-context.js';
import { renderTable } from '../internal/render-table.js';
import { toJson } from '../internal/to-json.js';

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
      'Per (code, kline type): rows, first and last bar (ISO-8601 UTC), and the gaps between them that the market calendar does not explain (weekends, holidays, lunch breaks and the forex weekly pause are not gaps, nor a hole that a halt in the suspension records of the dataset spans); per depth code: ticks, first and last tick time and seq, repeated seq; per suspension exchange: records, symbols, open halts, first and last publish date; per dataset the file count; files the commit log names that are gone are named on stderr (JSON: missing_files). No request is made.',
    )
    .requiredOption('--out <dir>', 'dataset directory or s3://bucket/prefix (as given to backfill/sync)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: InspectFlags) => {
      const { openOutForReading } = await import('../internal/check-out-dir.js');
      const copy = await openOutForReading(flags.out, ctx.io.cwd);
      const [{ inspectDataset }, { exchangeLocalTime }] = await Promise.all([
        import('@quoteflow/pipelines'),
        import('../internal/exchange-local-time.js'),
      ]);
      const inspection = await inspectDataset(copy.dir).finally(() => copy.close());
      const missing = inspection.kline.missingFiles;
      if (missing.length > 0)
        ctx.logger.warn(
          { files: missing.slice(0, 20), count: missing.length },
          `${missing.length} file(s) the kline commit log names are gone: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''} (their bars show as gaps; sync or backfill refetches what the service still serves)`,
        );
      ctx.out(
        flags.format === 'json'
          ? `${toJson(inspectionJson(inspection), 2)}\n`
          : renderInspection(inspection, exchangeLocalTime),
      );
    });
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : iso(ms));

/** The contract's JSON: `{"datasets": {"kline": {"files", "series": [...]}, "depth": {"files"}, "suspension": {"files"}}}`. */
function inspectionJson(inspection: DatasetInspection): unknown {
  return {
    datasets: {
      kline: {
        files: inspection.kline.files,
        missing_files: inspection.kline.missingFiles,
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
      depth: {
        files: inspection.depth.files,
        codes: inspection.depth.codes.map((d) => ({
          code: d.code,
          ticks: d.ticks,
          first: isoOrNull(d.firstMs),
          last: isoOrNull(d.lastMs),
          first_seq: d.firstSeq ?? null,
          last_seq: d.lastSeq ?? null,
          repeated_seq: d.repeatedSeq,
        })),
      },
      suspension: {
        files: inspection.suspension.files,
        exchanges: inspection.suspension.exchanges.map((e) => ({
          exchange: e.exchange,
          records: e.records,
          symbols: e.symbols,
          open: e.open,
          first: isoOrNull(e.firstMs),
          last: isoOrNull(e.lastMs),
        })),
      },
    },
  };
}

function renderInspection(
  inspection: DatasetInspection,
  exchangeLocalTime: (ms: number, code: string) => string,
): string {
  const { kline, depth, suspension } = inspection;
  const head = `files: kline ${kline.files}, depth ${depth.files}, suspension ${suspension.files}\n`;
  const body = renderKline(kline.series, exchangeLocalTime) + renderRecords(inspection);
  return head + (body === '' ? 'no kline series, depth ticks or suspension records\n' : body);
}

/** The depth codes and suspension exchanges a dataset holds, as tables (nothing when it holds none). */
function renderRecords({ depth, suspension }: DatasetInspection): string {
  const isoOr = (ms: number | undefined) => (ms === undefined ? '-' : iso(ms));
  const depthTable =
    depth.codes.length === 0
      ? ''
      : `depth:\n${renderTable<DepthCodeInspection>(depth.codes, [
          { header: 'code', value: (d) => d.code },
          { header: 'ticks', value: (d) => String(d.ticks), align: 'right' },
          { header: 'first tick', value: (d) => isoOr(d.firstMs) },
          { header: 'last tick', value: (d) => isoOr(d.lastMs) },
          { header: 'first seq', value: (d) => d.firstSeq ?? '-', align: 'right' },
          { header: 'last seq', value: (d) => d.lastSeq ?? '-', align: 'right' },
          { header: 'repeated seq', value: (d) => String(d.repeatedSeq), align: 'right' },
        ])}`;
  const suspensionTable =
    suspension.exchanges.length === 0
      ? ''
      : `suspension:\n${renderTable<SuspensionExchangeInspection>(suspension.exchanges, [
          { header: 'exchange', value: (e) => e.exchange },
          { header: 'records', value: (e) => String(e.records), align: 'right' },
          { header: 'symbols', value: (e) => String(e.symbols), align: 'right' },
          { header: 'open halts', value: (e) => String(e.open), align: 'right' },
          { header: 'first published', value: (e) => isoOr(e.firstMs) },
          { header: 'last published', value: (e) => isoOr(e.lastMs) },
        ])}`;
  return depthTable + suspensionTable;
}

function renderKline(
  series: readonly SeriesInspection[],
  exchangeLocalTime: (ms: number, code: string) => string,
): string {
  if (series.length === 0) return '';
  const table = renderTable<SeriesInspection>(series, [
    { header: 'code', value: (s) => s.code },
    { header: 'kline type', value: (s) => String(s.klineType), align: 'right' },
    { header: 'rows', value: (s) => String(s.rows), align: 'right' },
    { header: 'first', value: (s) => iso(s.firstMs) },
    { header: 'last', value: (s) => iso(s.lastMs) },
    { header: 'gaps', value: (s) => String(s.gaps.length), align: 'right' },
    { header: 'missing bars', value: (s) => String(s.gaps.reduce((n, g) => n + g.bars, 0)), align: 'right' },
    { header: 'duplicates', value: (s) => String(s.duplicates), align: 'right' },
  ]);
  const gapLines = series.flatMap((s) =>
    s.gaps.map(
      (g) =>
        `gap ${s.code} type ${s.klineType}: ${iso(g.fromMs)} to ${iso(g.toMs)} (${g.bars} bars; ` +
        `exchange time ${exchangeLocalTime(g.fromMs, s.code)} to ${exchangeLocalTime(g.toMs, s.code)})\n`,
    ),
  );
  return table + gapLines.join('');
}
