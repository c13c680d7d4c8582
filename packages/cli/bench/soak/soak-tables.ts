// What the soak's tables look like on disk at a moment: per dataset, the newest Delta log version,
// the log's files, and the data files on disk in each partition (the live ones and those a
// compaction removed from the log and a vacuum has not deleted yet); the claims in the log.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface TableFigures {
  readonly dataset: string;
  /** Newest version in `_delta_log/` (-1: no log yet). */
  readonly version: number;
  /** Files in `_delta_log/` (commits, log compactions, checkpoints). */
  readonly logFiles: number;
  readonly partitions: number;
  /** Data files of the fullest partition, and of all. */
  readonly maxFilesPerPartition: number;
  readonly files: number;
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** Data files per partition directory under `dir` (Hive `key=value` directories, any depth). */
async function partitionFiles(dir: string, into: Map<string, number>): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let files = 0;
  for (const e of entries) {
    if (e.isDirectory() && e.name.includes('=')) await partitionFiles(join(dir, e.name), into);
    else if (e.isFile() && !e.name.startsWith('.')) files++;
  }
  if (files > 0) into.set(dir, files);
}

/** The figures of `dataset` under the dataset directory `out`. */
export async function tableFigures(out: string, dataset: string): Promise<TableFigures> {
  const root = join(out, dataset);
  const log = await list(join(root, '_delta_log'));
  const versions = log.map((f) => /^(\d{20})\.json$/.exec(f)?.[1]).filter((v) => v !== undefined);
  const byPartition = new Map<string, number>();
  await partitionFiles(root, byPartition);
  const counts = [...byPartition.values()];
  return {
    dataset,
    version: versions.length === 0 ? -1 : Math.max(...versions.map(Number)),
    logFiles: log.length,
    partitions: counts.length,
    maxFilesPerPartition: counts.length === 0 ? 0 : Math.max(...counts),
    files: counts.reduce((a, b) => a + b, 0),
  };
}

/** A claim commit in a table's log: who claimed (or released) its series, and when (real ms). */
export interface ClaimCommit {
  readonly version: number;
  readonly writer: string;
  readonly timestampMs: number;
}

/** Every claim commit of `dataset` under `out`, oldest first. */
export async function claimCommits(out: string, dataset: string): Promise<ClaimCommit[]> {
  const logDir = join(out, dataset, '_delta_log');
  const commits = (await list(logDir)).filter((f) => /^\d{20}\.json$/.test(f)).sort();
  const claims: ClaimCommit[] = [];
  for (const f of commits) {
    for (const line of (await readFile(join(logDir, f), 'utf8')).split('\n')) {
      if (!line.includes('"commitInfo"')) continue;
      const info = (JSON.parse(line) as { commitInfo: Record<string, unknown> }).commitInfo;
      const own = info['quoteflow'] as { operation?: string; writer?: string } | undefined;
      if (own?.operation === 'claim' && own.writer !== undefined)
        claims.push({
          version: Number(f.slice(0, 20)),
          writer: own.writer,
          timestampMs: Number(info['timestamp']),
        });
    }
  }
  return claims;
}
