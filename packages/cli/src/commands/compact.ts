import { Option, type Command } from 'commander';
import { isQuoteflowError } from '@quoteflow/core/errors';
import type { CommandContext } from '../command-context.js';
import { durationFlag } from '../internal/duration.js';
import { renderTable } from '../internal/render-table.js';
import { snakeCaseJson } from '../internal/snake-case-json.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';

interface CompactFlags {
  out: string;
  dataset?: 'kline' | 'depth' | 'suspension';
  maxRowsPerFile: string;
  wait: string;
  vacuumRetention?: string;
  format: 'table' | 'json';
}

interface Row {
  dataset: string;
  partition: string;
  filesBefore: number;
  filesAfter: number;
  rows: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** `quoteflow compact`: merges the small files of each partition (no request, no token). */
export function registerCompactCommand(program: Command, ctx: CommandContext): void {
  program
    .command('compact')
    .summary("merges each partition's small files into few large ones")
    .description(
      "Merges each partition's small files into files of up to --max-rows-per-file rows, with exactly the same rows. " +
        "Each partition is built under DIR/.staging, committed to the dataset's Delta log (DIR/<dataset>/_delta_log) and swapped in " +
        'whole (renameat2 on Linux), so a reader listing files sees the old files or the new ones; kill -9 at any moment ' +
        'is finished or undone by the next writer. Safe beside a running sync or backfill on the same DIR (files they ' +
        'publish meanwhile are kept); exits 2 if the publish lock stays held by another process for --wait seconds. ' +
        'On s3://bucket/prefix the new files and the remove of the old ones are one Delta version (no lock, no swap; ' +
        'Delta readers are exact throughout) and --vacuum-retention then deletes the removed files. No request is made.',
    )
    .requiredOption(
      '--out <dir>',
      'dataset directory or s3://bucket/prefix (as given to backfill/sync/depth)',
    )
    .addOption(
      new Option('--dataset <name>', 'one dataset only (default: all)').choices([
        'kline',
        'depth',
        'suspension',
      ]),
    )
    .option('--max-rows-per-file <n>', 'rows per compacted file, at most', '4194304')
    .option('--wait <seconds>', "how long to wait for the dataset's publish lock", '60')
    .option(
      '--vacuum-retention <duration>',
      "on s3:// only: after compacting, delete files removed (and uploads never committed) longer ago than this, e.g. 168h (Delta's default), 30m, 7d; 0s deletes them at once (time travel to older versions then fails)",
    )
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (flags: CompactFlags) => {
      const { dir, retentionMs } = await compactTarget(flags, ctx.io.cwd);
      const maxRows = Number(flags.maxRowsPerFile);
      if (!Number.isInteger(maxRows) || maxRows < 1)
        throw new UsageError(
          `--max-rows-per-file must be a whole number >= 1, got ${JSON.stringify(flags.maxRowsPerFile)}`,
        );
      const waitS = Number(flags.wait);
      if (!Number.isFinite(waitS) || waitS < 0)
        throw new UsageError(`--wait must be a number of seconds >= 0, got ${JSON.stringify(flags.wait)}`);
      const { compactDatasets } = await import('@quoteflow/pipelines');
      let done;
      try {
        done = await compactDatasets({
          dir,
          ...(flags.dataset === undefined ? {} : { datasets: [flags.dataset] }),
          maxRowsPerFile: maxRows,
          lockTimeoutMs: waitS * 1000,
          onPartition: (dataset, r) =>
            ctx.logger.info(
              { dataset, partition: r.partition, filesBefore: r.filesBefore, filesAfter: r.filesAfter },
              'partition compacted',
            ),
        });
      } catch (err) {
        if (isQuoteflowError(err, 'QF_LOCKED'))
          throw new UsageError(`--out ${flags.out}: ${err.message}; nothing was changed, try again later`);
        throw err;
      }
      const rows: Row[] = done.map(({ dataset, result: r }) => ({ dataset, ...r }));
      const vacuum = retentionMs === undefined ? undefined : await vacuumAll(dir, flags.dataset, retentionMs);
      if (flags.format === 'json')
        ctx.out(
          `${toJson(snakeCaseJson({ partitions: rows, ...(vacuum === undefined ? {} : { vacuum }) }), 2)}\n`,
        );
      else {
        ctx.out(renderCompaction(rows));
        for (const v of vacuum ?? [])
          ctx.out(
            `vacuum ${v.dataset}: ${v.deleted.length} file(s) deleted, ${v.retained} removed file(s) kept within the retention\n`,
          );
      }
    });
}

/** `--out` checked (a local directory that exists, or an s3:// destination that can be committed to) and `--vacuum-retention`. */
async function compactTarget(
  flags: CompactFlags,
  cwd: string,
): Promise<{ dir: string; retentionMs?: number }> {
  const { resolve } = await import('node:path');
  const { stat } = await import('node:fs/promises');
  const { checkOutDir, checkOutScheme } = await import('../internal/check-out-dir.js');
  const remote = (await checkOutScheme(flags.out)) === 's3';
  const dir = remote ? flags.out : resolve(cwd, flags.out);
  const retentionMs =
    flags.vacuumRetention === undefined
      ? undefined
      : durationFlag('--vacuum-retention', flags.vacuumRetention);
  if (retentionMs !== undefined && !remote)
    throw new UsageError(
      '--vacuum-retention is for s3:// destinations: on a local disk compaction swaps the files away, leaving nothing to vacuum',
    );
  if (remote) await checkOutDir(flags.out, cwd);
  else if ((await stat(dir).catch(() => undefined))?.isDirectory() !== true)
    throw new UsageError(`--out ${flags.out}: no such directory`);
  return retentionMs === undefined ? { dir } : { dir, retentionMs };
}

async function vacuumAll(
  dir: string,
  only: CompactFlags['dataset'],
  retentionMs: number,
): Promise<{ dataset: string; deleted: readonly string[]; retained: number }[]> {
  const { vacuumDataset, DATASET_KINDS } = await import('@quoteflow/sinks');
  const out = [];
  for (const dataset of only === undefined ? DATASET_KINDS : [only])
    out.push(await vacuumDataset({ dir, dataset, retentionMs }));
  return out;
}

function renderCompaction(rows: readonly Row[]): string {
  if (rows.length === 0) return 'nothing to compact: no partition has two or more small files\n';
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  return renderTable<Row>(rows, [
    { header: 'dataset', value: (r) => r.dataset },
    { header: 'partition', value: (r) => r.partition.slice(r.dataset.length + 1) },
    { header: 'files', value: (r) => `${r.filesBefore} → ${r.filesAfter}`, align: 'right' },
    { header: 'rows', value: (r) => String(r.rows), align: 'right' },
    { header: 'MiB', value: (r) => `${mb(r.bytesBefore)} → ${mb(r.bytesAfter)}`, align: 'right' },
  ]);
}
