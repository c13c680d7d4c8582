// What a dataset log writes: a change as the Delta actions of its commit, and the whole state as
// the actions of a log compaction or checkpoint.
import type { DatasetKind } from '../dataset-columns.js';
import {
  addWatermark,
  normalizeSeriesKey,
  type LogFile,
  type LogOperation,
  type SeriesWatermark,
} from '../dataset-log-format.js';
import type { DatasetLog } from '../dataset-log.js';
import type { LogChange } from '../dataset-log-options.js';
import { FileSinkError } from '../file-sink-error.js';
import { claimActions, ownerDomain, writerDomain } from '../internal/claim-actions.js';
import {
  DELTA_PROTOCOL,
  FILE_DOMAIN,
  newMetaData,
  partitionValuesOf,
  SERIES_DOMAIN,
  toDeltaPath,
  withPartitionColumns,
  type DeltaAction,
} from './delta-actions.js';
import type { DeltaState, QuoteflowCommitInfo } from './delta-state.js';
import { readFileStats } from './file-stats.js';
import { raisedMetaData } from './table-format.js';

const OPERATION_NAMES: Partial<Record<LogOperation, string>> = { convert: 'CONVERT', claim: 'CLAIM' };

/** Who commits a change, when, and onto what. */
export interface ChangeCommit {
  /** The log's state as read (the version before the change's). */
  readonly state: DeltaState;
  /** This writer's id (`quoteflow.writer` of the commit, owner of its claims). */
  readonly writer: string;
  readonly nowMs: number;
  /** What this writer is (`quoteflow sync`), recorded with its claims. */
  readonly command: string | undefined;
}

/**
 * The Delta actions of `change` committed as `version`: commitInfo, (protocol and metaData first,
 * or a raised format version), adds, removes, the series' new watermarks, claims.
 */
export async function changeActions(
  log: DatasetLog,
  change: LogChange,
  version: number,
  { state, writer, nowMs, command }: ChangeCommit,
): Promise<DeltaAction[]> {
  const staged: Record<string, string> = {};
  // On object storage the files are at their final keys before the commit: nothing to publish.
  if (!log.remote) for (const f of change.add) if (f.staged !== undefined) staged[f.path] = f.staged;
  const info: QuoteflowCommitInfo = {
    operation: change.operation,
    writer,
    ...(Object.keys(staged).length === 0 ? {} : { staged }),
    ...(change.swap === undefined ? {} : { swap: change.swap }),
    ...(change.series === undefined ? {} : { series: change.series }),
  };
  const compact = change.operation === 'compact';
  const actions: DeltaAction[] = [
    {
      commitInfo: {
        timestamp: nowMs,
        operation: compact ? 'OPTIMIZE' : (OPERATION_NAMES[change.operation] ?? 'WRITE'),
        operationParameters: compact || change.operation === 'claim' ? {} : { mode: 'Append' },
        isBlindAppend: !compact,
        engineInfo: 'quoteflow',
        quoteflow: info,
      },
    },
  ];
  const dataset = log.dataset;
  let meta = state.metaData;
  const first = change.add.find((f) => f.path.endsWith('.parquet')) ?? change.add[0];
  const columns =
    first === undefined ? undefined : partitionValuesOf(tablePath(dataset, first.path)).map(([k]) => k);
  if (version === 0 || meta === undefined) {
    meta = newMetaData(dataset, columns ?? [], nowMs);
    actions.push({ protocol: DELTA_PROTOCOL }, { metaData: meta });
  } else {
    // This release's first commit to a table of an older format raises its format version.
    let next = raisedMetaData(meta);
    // No file yet (the first versions only claimed series): the first file's layout is the table's.
    if (columns !== undefined && state.files.size === 0 && `${columns}` !== `${meta.partitionColumns}`)
      next = withPartitionColumns(next ?? meta, dataset, columns);
    if (next !== undefined) actions.push({ metaData: (meta = next) });
  }
  for (const f of change.add) actions.push(await addAction(log, f, meta.partitionColumns, nowMs, !compact));
  for (const path of change.remove ?? []) actions.push(removeAction(state, path, nowMs, !compact));
  const totals = new Map<string, SeriesWatermark>();
  for (const [raw, gained] of Object.entries(change.series ?? {})) {
    const key = normalizeSeriesKey(raw);
    totals.set(key, addWatermark(totals.get(key) ?? state.series.get(key), gained));
  }
  for (const [key, total] of totals) {
    actions.push({
      domainMetadata: {
        domain: `${SERIES_DOMAIN}${key}`,
        configuration: JSON.stringify(total),
        removed: false,
      },
    });
  }
  actions.push(...claimActions(log, change, nowMs, { command, leaseMs: log.leaseMs }));
  return actions;
}

/**
 * The whole state as Delta actions: protocol, metaData, live adds, domains, and on object storage
 * the tombstones (`vacuumDataset` needs their removal times; locally nothing vacuums).
 */
export function stateActions(s: DeltaState, remote: boolean): DeltaAction[] {
  const lines: DeltaAction[] = [{ protocol: DELTA_PROTOCOL }];
  if (s.metaData !== undefined) lines.push({ metaData: s.metaData });
  for (const add of s.adds.values()) lines.push({ add: { ...add, dataChange: false } });
  if (remote) for (const remove of s.tombstones.values()) lines.push({ remove });
  for (const f of s.files.values()) {
    if (s.adds.has(f.path)) continue;
    const configuration = JSON.stringify({ rows: f.rows, bytes: f.bytes });
    lines.push({ domainMetadata: { domain: `${FILE_DOMAIN}${f.path}`, configuration, removed: false } });
  }
  for (const [key, w] of s.series)
    lines.push({
      domainMetadata: {
        domain: `${SERIES_DOMAIN}${key}`,
        configuration: JSON.stringify(w),
        removed: false,
      },
    });
  for (const [key, writer] of s.owners) lines.push(ownerDomain(key, writer));
  for (const [id, w] of s.writers) lines.push(writerDomain(id, w));
  return lines;
}

/** A dataset-relative path (`kline/…`) as a path in its table. */
function tablePath(dataset: DatasetKind, dirPath: string): string {
  const prefix = `${dataset}/`;
  if (!dirPath.startsWith(prefix))
    throw new FileSinkError('QF_DATASET_LOG', `${dirPath} is not under ${prefix} (the ${dataset} table)`);
  return dirPath.slice(prefix.length);
}

async function addAction(
  log: DatasetLog,
  f: LogFile,
  partitionColumns: readonly string[],
  nowMs: number,
  dataChange: boolean,
): Promise<DeltaAction> {
  const dataset = log.dataset;
  const path = tablePath(dataset, f.path);
  if (!f.path.endsWith('.parquet')) {
    const configuration = JSON.stringify({ rows: f.rows, bytes: f.bytes });
    return { domainMetadata: { domain: `${FILE_DOMAIN}${f.path}`, configuration, removed: false } };
  }
  const values = partitionValuesOf(path);
  if (values.map(([k]) => k).join('/') !== partitionColumns.join('/'))
    throw new FileSinkError(
      'QF_DATASET_LOG',
      `${f.path} is partitioned by ${values.map(([k]) => k).join(', ') || 'nothing'}, the ${dataset} table by ${partitionColumns.join(', ') || 'nothing'}: one table has one layout`,
    );
  const stats = f.stats ?? (await readFileStats(log.root, f.staged ?? f.path, dataset));
  return {
    add: {
      path: toDeltaPath(path),
      partitionValues: Object.fromEntries(values),
      size: f.bytes,
      modificationTime: nowMs,
      dataChange,
      stats: JSON.stringify(stats),
    },
  };
}

function removeAction(state: DeltaState, path: string, nowMs: number, dataChange: boolean): DeltaAction {
  const add = state.adds.get(path);
  if (add === undefined)
    return { domainMetadata: { domain: `${FILE_DOMAIN}${path}`, configuration: '{}', removed: true } };
  return {
    remove: {
      path: add.path,
      deletionTimestamp: nowMs,
      dataChange,
      extendedFileMetadata: true,
      partitionValues: add.partitionValues,
      size: add.size,
    },
  };
}
