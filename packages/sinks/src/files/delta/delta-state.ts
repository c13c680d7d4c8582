import type { DatasetKind } from '../dataset-columns.js';
import {
  LOG_OPERATIONS,
  type LogEntry,
  type LogFile,
  type LogOperation,
  type SeriesWatermark,
} from '../dataset-log-format.js';
import { FileSinkError } from '../file-sink-error.js';
import type { TableWriter } from '../table-writer.js';
import {
  DELTA_PROTOCOL,
  FILE_DOMAIN,
  fromDeltaPath,
  OWNER_DOMAIN,
  SERIES_DOMAIN,
  WRITER_DOMAIN,
  type DeltaAdd,
  type DeltaMetaData,
  type DeltaRemove,
  type DeltaStats,
} from './delta-actions.js';

/** What quoteflow adds to a commit's `commitInfo` (under `quoteflow`). */
export interface QuoteflowCommitInfo {
  readonly operation: LogOperation;
  readonly writer: string;
  /** Final path → staged path (both relative to `DIR`) of files a checkpoint publishes after the commit. */
  readonly staged?: Readonly<Record<string, string>>;
  readonly swap?: { readonly partition: string; readonly staged: string };
  /** What each series gained in this commit (the totals are in `domainMetadata`). */
  readonly series?: Readonly<Record<string, SeriesWatermark>>;
}

type Json = Record<string, unknown>;

/**
 * A Delta table's state as quoteflow needs it, folded action by action: the live files (Parquet
 * ones from `add`/`remove`, other formats from `domainMetadata` under `quoteflow.file.`), the
 * series' watermarks (`domainMetadata` under `quoteflow.series.`), who owns which series and the
 * writers holding claims (`quoteflow.owner.`, `quoteflow.writer.`), protocol and metadata.
 */
export class DeltaState {
  version = -1;
  metaData: DeltaMetaData | undefined;
  readonly files = new Map<string, LogFile>();
  /** The `add` action of each live Parquet file, by path relative to `DIR`. */
  readonly adds = new Map<string, DeltaAdd>();
  readonly series = new Map<string, SeriesWatermark>();
  /** Files removed and not added again (Delta's tombstones): path relative to `DIR` → the `remove` action. */
  readonly tombstones = new Map<string, DeltaRemove>();
  /** Per claimed series, the id of the writer that owns it. */
  readonly owners = new Map<string, string>();
  /** The writers with claims, by id. */
  readonly writers = new Map<string, TableWriter>();

  /**
   * @param keepTombstones whether removed files are remembered (object storage: vacuum and the
   * checkpoints need them for the retention); a local table's compaction deletes what it replaced
   * at once, so a writer running for months would only pile up a week of them.
   */
  constructor(
    readonly dataset: DatasetKind,
    keepTombstones = true,
  ) {
    this.#keepTombstones = keepTombstones;
  }

  readonly #keepTombstones: boolean;

  /** Forgets tombstones of files removed before `cutoffMs` (epoch ms), as Delta's checkpoints do. */
  expireTombstones(cutoffMs: number): void {
    for (const [path, r] of this.tombstones) if (r.deletionTimestamp < cutoffMs) this.tombstones.delete(path);
  }

  /** Path relative to `DIR` of a Delta path (relative to the table root). */
  dirPath(deltaPath: string): string {
    return `${this.dataset}/${fromDeltaPath(deltaPath)}`;
  }

  /** Folds one commit (or log compaction) file's actions; returns the commit as a {@link LogEntry}. */
  fold(version: number, actions: readonly Json[]): LogEntry {
    let info: QuoteflowCommitInfo | undefined;
    let committedAt = '';
    const add: LogFile[] = [];
    const remove: string[] = [];
    for (const action of actions) {
      if (action.commitInfo !== undefined) {
        const ci = action.commitInfo as Json;
        info = ci.quoteflow as QuoteflowCommitInfo | undefined;
        committedAt = typeof ci.timestamp === 'number' ? new Date(ci.timestamp).toISOString() : '';
      } else if (action.protocol !== undefined) checkProtocol(action.protocol as Json, this.dataset);
      else if (action.metaData !== undefined) this.metaData = action.metaData as DeltaMetaData;
      else if (action.add !== undefined) add.push(this.#add(action.add as DeltaAdd, info));
      else if (action.remove !== undefined) {
        const path = this.dirPath((action.remove as { path: string }).path);
        this.files.delete(path);
        this.adds.delete(path);
        if (this.#keepTombstones) this.tombstones.set(path, action.remove as DeltaRemove);
        remove.push(path);
      } else if (action.domainMetadata !== undefined) {
        const f = this.#domain(action.domainMetadata as Json, info);
        if (f?.removed === true) remove.push(f.file.path);
        else if (f !== undefined) add.push(f.file);
      }
    }
    this.version = version;
    const operation = LOG_OPERATIONS.includes(info?.operation as LogOperation) ? info!.operation : 'adopt';
    return {
      version,
      committedAt,
      writer: info?.writer ?? '',
      operation,
      add,
      remove,
      ...(info?.series === undefined ? {} : { series: info.series }),
      ...(info?.swap === undefined ? {} : { swap: info.swap }),
    };
  }

  #add(a: DeltaAdd, info: QuoteflowCommitInfo | undefined): LogFile {
    const path = this.dirPath(a.path);
    const stats = a.stats === undefined ? undefined : (JSON.parse(a.stats) as DeltaStats);
    const file: LogFile = {
      path,
      rows: stats?.numRecords ?? -1,
      bytes: a.size,
      ...(stats === undefined ? {} : { stats }),
    };
    this.files.set(path, file);
    this.adds.set(path, a);
    this.tombstones.delete(path);
    const staged = info?.staged?.[path];
    return staged === undefined ? file : { ...file, staged };
  }

  #domain(d: Json, info: QuoteflowCommitInfo | undefined): { file: LogFile; removed: boolean } | undefined {
    const domain = String(d.domain);
    const removed = d.removed === true;
    if (domain.startsWith(OWNER_DOMAIN) || domain.startsWith(WRITER_DOMAIN)) {
      this.#claim(domain, removed ? undefined : String(d.configuration));
      return undefined;
    }
    if (domain.startsWith(SERIES_DOMAIN)) {
      const key = domain.slice(SERIES_DOMAIN.length);
      if (removed) this.series.delete(key);
      else this.series.set(key, JSON.parse(String(d.configuration)) as SeriesWatermark);
      return undefined;
    }
    if (!domain.startsWith(FILE_DOMAIN)) return undefined;
    const path = domain.slice(FILE_DOMAIN.length);
    if (removed) {
      this.files.delete(path);
      return { file: { path, rows: 0, bytes: 0 }, removed };
    }
    const { rows, bytes } = JSON.parse(String(d.configuration)) as { rows: number; bytes: number };
    const file: LogFile = { path, rows, bytes };
    this.files.set(path, file);
    const staged = info?.staged?.[path];
    return { file: staged === undefined ? file : { ...file, staged }, removed };
  }

  #claim(domain: string, configuration: string | undefined): void {
    const owner = domain.startsWith(OWNER_DOMAIN);
    const key = domain.slice(owner ? OWNER_DOMAIN.length : WRITER_DOMAIN.length);
    const map: Map<string, unknown> = owner ? this.owners : this.writers;
    if (configuration === undefined) {
      map.delete(key);
      return;
    }
    const value = JSON.parse(configuration) as { writer?: string } & TableWriter;
    if (owner) this.owners.set(key, String(value.writer));
    else this.writers.set(key, { ...value, id: key });
  }
}

/** Refuses a table whose protocol asks for what quoteflow does not implement (loudly, before any write). */
function checkProtocol(p: Json, dataset: DatasetKind): void {
  const reader = Number(p.minReaderVersion);
  const writer = Number(p.minWriterVersion);
  const features = (p.writerFeatures as string[] | undefined) ?? [];
  const known = new Set<string>(DELTA_PROTOCOL.writerFeatures);
  const ok = reader <= 1 && (writer <= 1 || (writer === 7 && features.every((f) => known.has(f))));
  if (!ok)
    throw new FileSinkError(
      'QF_DATASET_LOG',
      `the ${dataset} Delta table asks for reader version ${reader}, writer version ${writer} (${features.join(', ') || 'no features'}): quoteflow writes reader 1, writer 7 with domainMetadata and invariants only`,
    );
}
