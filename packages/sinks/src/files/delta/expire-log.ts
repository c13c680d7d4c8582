import type { DatasetKind } from '../dataset-columns.js';
import type { ObjectStore } from '../storage/object-store.js';

const COMMIT = /^(\d{20})\.json$/;
const CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/;
const COMPACTION = /^0{20}\.(\d{20})\.compacted\.json$/;
/** quoteflow's local marker of the newest version published (see `DatasetLog`). */
const APPLIED = '.quoteflow-applied';

/** Which checkpoints {@link expireDeltaLog} thins out (besides those the retention expires). */
export interface CheckpointThinning {
  /** Checkpoints of versions divisible by this stay for the retention. */
  readonly keepEvery: number;
  /** Any other goes once the next newer checkpoint was written this long ago. */
  readonly supersededForMs: number;
}

/**
 * Delta's log retention (`delta.logRetentionDuration`, its metadata cleanup) for one table's log
 * (`<dataset>/_delta_log/` of `store`): finds the newest checkpoint written longer than
 * `retentionMs` ago and deletes the commits, checkpoints and log compactions of every version
 * before it. Readers start from a checkpoint (delta-rs, Polars, DuckDB and Spark from the newest,
 * `DatasetLog` too), so the table reads as before; only time travel to a version before that
 * checkpoint ends, as it does in Delta. With `thinning`, checkpoints of versions off its grid go
 * once superseded long enough (time travel then starts from an earlier one and replays more
 * commits). Locally a version not yet published (a writer killed between its commit and its
 * renames) is never deleted. Resolves with the keys deleted.
 */
export async function expireDeltaLog(
  store: ObjectStore,
  dataset: DatasetKind,
  retentionMs: number,
  nowMs: number,
  thinning?: CheckpointThinning,
): Promise<string[]> {
  const logKey = `${dataset}/_delta_log/`;
  const objects = await store.list(logKey, undefined, true);
  const cutoffMs = nowMs - retentionMs;
  const checkpoints: { version: number; key: string; atMs: number }[] = [];
  for (const o of objects) {
    const m = CHECKPOINT.exec(o.key.slice(logKey.length));
    if (m !== null) checkpoints.push({ version: Number(m[1]), key: o.key, atMs: o.lastModifiedMs });
  }
  checkpoints.sort((a, b) => a.version - b.version);
  let keep = -1;
  for (const c of checkpoints) if (c.atMs <= cutoffMs) keep = Math.max(keep, c.version);
  if (store.kind === 'local') keep = Math.min(keep, (await appliedVersion(store, logKey + APPLIED)) + 1);
  const gone: string[] = [];
  if (keep > 0)
    for (const { key } of objects) {
      const name = key.slice(logKey.length);
      const m = COMMIT.exec(name) ?? CHECKPOINT.exec(name) ?? COMPACTION.exec(name);
      if (m !== null && Number(m[1]) < keep) gone.push(key);
    }
  if (thinning !== undefined)
    checkpoints.forEach((c, i) => {
      const next = checkpoints[i + 1];
      if (c.version < keep || c.version === keep || next === undefined) return;
      if (c.version % thinning.keepEvery === 0 || next.atMs > nowMs - thinning.supersededForMs) return;
      gone.push(c.key);
    });
  await store.delete(gone);
  return gone;
}

async function appliedVersion(store: ObjectStore, key: string): Promise<number> {
  const bytes = await store.read(key).catch(() => undefined);
  const n = bytes === undefined ? NaN : Number(Buffer.from(bytes).toString('utf8').trim());
  return Number.isInteger(n) ? n : -1;
}
