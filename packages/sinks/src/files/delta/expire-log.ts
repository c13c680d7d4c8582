import type { DatasetKind } from '../dataset-columns.js';
import type { ObjectStore } from '../storage/object-store.js';

const COMMIT = /^(\d{20})\.json$/;
const CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/;
const COMPACTION = /^0{20}\.(\d{20})\.compacted\.json$/;
/** quoteflow's local marker of the newest version published (see `DatasetLog`). */
const APPLIED = '.quoteflow-applied';

/**
 * Delta's log retention (`delta.logRetentionDuration`, its metadata cleanup) for one table's log
 * (`<dataset>/_delta_log/` of `store`): finds the newest checkpoint written longer than
 * `retentionMs` ago and deletes the commits, checkpoints and log compactions of every version
 * before it. Readers start from a checkpoint (delta-rs, Polars, DuckDB and Spark from the newest,
 * `DatasetLog` too), so the table reads as before; only time travel to a version before that
 * checkpoint ends, as it does in Delta. Locally a version not yet published (a writer killed
 * between its commit and its renames) is never deleted. Resolves with the keys deleted.
 */
export async function expireDeltaLog(
  store: ObjectStore,
  dataset: DatasetKind,
  retentionMs: number,
  nowMs: number,
): Promise<string[]> {
  const logKey = `${dataset}/_delta_log/`;
  const objects = await store.list(logKey, undefined, true);
  const cutoffMs = nowMs - retentionMs;
  let keep = -1;
  for (const o of objects) {
    const m = CHECKPOINT.exec(o.key.slice(logKey.length));
    if (m !== null && o.lastModifiedMs <= cutoffMs) keep = Math.max(keep, Number(m[1]));
  }
  if (store.kind === 'local') keep = Math.min(keep, (await appliedVersion(store, logKey + APPLIED)) + 1);
  if (keep <= 0) return [];
  const gone: string[] = [];
  for (const { key } of objects) {
    const name = key.slice(logKey.length);
    const m = COMMIT.exec(name) ?? CHECKPOINT.exec(name) ?? COMPACTION.exec(name);
    if (m !== null && Number(m[1]) < keep) gone.push(key);
  }
  await store.delete(gone);
  return gone;
}

async function appliedVersion(store: ObjectStore, key: string): Promise<number> {
  const bytes = await store.read(key).catch(() => undefined);
  const n = bytes === undefined ? NaN : Number(Buffer.from(bytes).toString('utf8').trim());
  return Number.isInteger(n) ? n : -1;
}
