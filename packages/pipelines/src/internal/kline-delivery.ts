import { isKlineType, type BarUpdate, type KlineType } from '@quoteflow/core';
import { seriesKey } from '@quoteflow/operators';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  compactDataset,
  DatasetLog,
  DatasetWriter,
  FileSinkError,
  KafkaSink,
  type KafkaSinkOptions,
  type SeriesWatermark,
  type WrittenFile,
} from '@quoteflow/sinks';
import type { KlineFilesOptions, KlineSyncEvent } from '../kline-sync-options.js';
import { PipelineError } from '../pipeline-error.js';
import { stateKey, SyncState, widenExtent, type SeriesExtent } from '../sync-state.js';
import { isPartitionClosed } from './closed-partitions.js';
import { summarizeKlineFile } from './read-kline-extents.js';

/** What {@link KlineDelivery.open} takes. */
export interface KlineDeliveryOptions {
  readonly files: KlineFilesOptions | undefined;
  readonly kafka: KafkaSinkOptions | undefined;
  readonly statePath: string | undefined;
  readonly live: boolean;
  readonly onUpdate: ((update: BarUpdate) => void) | undefined;
  readonly emitEvent: (event: KlineSyncEvent) => void;
  /** The sync's clock: which partitions are closed (an earlier month, day or year). */
  readonly nowMs: () => number;
}

/**
 * Where a K-line sync's bars go: closed bars to the dataset files, every update to Kafka and the
 * caller, and the state (what the dataset holds per series) advanced only once the files holding it are
 * durable, at each checkpoint.
 *
 * With files, each checkpoint is one commit to the dataset's log (`DatasetLog`): its files, staged
 * until then, and what each series gained, published together or not at all; a restart or a
 * takeover reads the log instead of every file. Partitions closed for writing are compacted every
 * `compactEveryMs`.
 */
export class KlineDelivery {
  closedBars = 0;
  formingUpdates = 0;
  readonly files: WrittenFile[] = [];
  /** What each series got in the writer since the last checkpoint (the state learns it once durable). */
  readonly #pending = new Map<string, PendingSeries>();
  readonly #kafkaInFlight = new Set<Promise<void>>();
  #kafkaError: unknown;

  #lastCompactionMs: number;

  private constructor(
    readonly state: SyncState,
    private readonly log: DatasetLog | undefined,
    private readonly writer: DatasetWriter | undefined,
    private readonly kafka: KafkaSink | undefined,
    private readonly options: KlineDeliveryOptions,
  ) {
    this.#lastCompactionMs = options.nowMs();
  }

  /**
   * Reads what the dataset holds from its commit log (files on disk that no commit names, from an
   * earlier quoteflow or a crash before this log existed, are read once and committed), else from
   * the state file; then opens the sinks.
   */
  static async open(options: KlineDeliveryOptions): Promise<KlineDelivery> {
    const files = options.files;
    let state: SyncState;
    let log: DatasetLog | undefined;
    if (files === undefined) {
      state = options.statePath === undefined ? new SyncState() : await SyncState.load(options.statePath);
    } else {
      log = await DatasetLog.open(files.dir, 'kline', {
        summarize: (rel) => summarizeKlineFile(files.dir, rel),
      });
      await log.transaction(async () => undefined, { adoptOrphans: true });
      state = stateFromLog(log);
    }
    const writer =
      files === undefined
        ? undefined
        : new DatasetWriter({
            dir: files.dir,
            format: files.format ?? 'parquet',
            encoderThreads: files.encoderThreads ?? (options.live ? 0 : 1),
            publish: 'on-commit',
            ...(files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: files.maxFileAgeMs }),
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    return new KlineDelivery(state, log, writer, kafka, options);
  }

  /** A closed bar to the files (or the state, without files); every update to Kafka and the caller. */
  deliver(u: BarUpdate): void {
    if (u.final) {
      this.closedBars++;
      const added = { firstMs: u.tsMs, lastMs: u.tsMs, rows: 1 };
      if (this.writer !== undefined) {
        this.writer.append(u);
        const key = seriesKey(u.code, u.klineType);
        const held = this.#pending.get(key)?.extent;
        this.#pending.set(key, {
          code: u.code,
          klineType: u.klineType,
          extent: widenExtent(held, added),
        });
      } else {
        this.state.record(u.code, u.klineType, added);
      }
    } else {
      this.formingUpdates++;
    }
    if (this.kafka !== undefined) {
      const p = this.kafka.write(u).catch((err: unknown) => {
        this.#kafkaError ??= err;
      });
      this.#kafkaInFlight.add(p);
      void p.finally(() => this.#kafkaInFlight.delete(p));
    }
    try {
      this.options.onUpdate?.(u);
    } catch (err) {
      this.options.emitEvent({ type: 'warning', message: 'onUpdate threw', error: err });
    }
  }

  /**
   * Makes the files durable and Kafka acknowledged, then commits the files with what each series
   * gained (one log version) and saves the state file, if any.
   */
  async checkpoint(): Promise<void> {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    const files = this.writer === undefined ? [] : await this.writer.flush();
    if (this.kafka !== undefined) {
      await this.kafka.flush();
      if (this.#kafkaError !== undefined)
        throw new PipelineError('QF_PIPELINE', 'klineSync: Kafka delivery failed', {
          cause: this.#kafkaError,
        });
    }
    if (this.log !== undefined && files.length > 0) await this.commit(this.log, files, pending);
    for (const { code, klineType, extent } of pending) this.state.record(code, klineType, extent);
    this.files.push(...files);
    if (this.options.statePath !== undefined) await this.state.save(this.options.statePath);
    this.options.emitEvent({ type: 'checkpoint', files, closedBars: this.closedBars });
    await this.compactClosedPartitions();
  }

  private async commit(log: DatasetLog, files: WrittenFile[], pending: PendingSeries[]): Promise<void> {
    const dir = log.root;
    const series: Record<string, SeriesWatermark> = {};
    for (const { code, klineType, extent } of pending)
      series[stateKey(code, klineType)] = { first: extent.firstMs, last: extent.lastMs, rows: extent.rows };
    const fence = this.options.files?.fence;
    const fenced = await log.transaction(async (tx) => {
      // Asked holding the publish lock, right before the commit: a worker whose lease lapsed
      // (another may now write its series) publishes nothing.
      if (fence !== undefined && !fence()) return true;
      await tx.commit({
        operation: 'checkpoint',
        add: files.map((f) => ({
          path: f.relativePath,
          rows: f.rows,
          bytes: f.bytes,
          ...(f.stagedPath === undefined ? {} : { staged: f.stagedPath }),
        })),
        series,
      });
      return false;
    });
    if (fenced) {
      await Promise.all(
        files.map((f) =>
          f.stagedPath === undefined ? undefined : rm(join(dir, f.stagedPath), { force: true }),
        ),
      );
      throw new FileSinkError(
        'QF_FENCED',
        `klineSync: ${files.length} file(s) not committed: this worker may no longer write its series (its lease lapsed)`,
      );
    }
  }

  /**
   * Every `compactEveryMs` of the sync's clock: compacts the partitions closed for writing, and the
   * open one once it holds {@link OPEN_PARTITION_MIN_FILES} small files.
   */
  private async compactClosedPartitions(): Promise<void> {
    const files = this.options.files;
    const everyMs = files?.compactEveryMs ?? 600_000;
    const nowMs = this.options.nowMs();
    if (files === undefined || everyMs <= 0 || nowMs - this.#lastCompactionMs < everyMs) return;
    this.#lastCompactionMs = nowMs;
    const results = await compactDataset({
      dir: files.dir,
      dataset: 'kline',
      // Closed partitions (an earlier month or day) at once; the one still being written once it
      // holds a few hours of checkpoints, so readers never face thousands of files.
      minSmallFiles: (p) => (isPartitionClosed(p, nowMs) ? 2 : OPEN_PARTITION_MIN_FILES),
      summarize: (rel) => summarizeKlineFile(files.dir, rel),
    });
    for (const r of results) this.options.emitEvent({ type: 'compacted', ...r });
  }

  /**
   * Reads what other writers committed (another worker's series, before a takeover), and files
   * that appeared without a commit. Checkpoint first, so that this sync's own rows are committed.
   */
  async readNewFiles(): Promise<void> {
    if (this.log === undefined) return;
    await this.log.transaction(async () => undefined, { adoptOrphans: true });
    for (const [key, w] of this.log.series) {
      const parsed = parseStateKey(key);
      if (parsed !== undefined)
        this.state.set(parsed.code, parsed.klineType, { firstMs: w.first, lastMs: w.last, rows: w.rows });
    }
  }

  /** Closes the sinks; resolves with the first failure, if any (after trying every sink). */
  async close(): Promise<unknown> {
    let failure: unknown;
    await this.writer?.close().catch((err: unknown) => {
      failure ??= err;
    });
    await Promise.allSettled([...this.#kafkaInFlight]);
    await this.kafka?.close().catch((err: unknown) => {
      failure ??= err;
    });
    return failure;
  }
}

/** Small files (about one per checkpoint) after which the partition a sync is writing is compacted. */
const OPEN_PARTITION_MIN_FILES = 240;

interface PendingSeries {
  readonly code: string;
  readonly klineType: KlineType;
  readonly extent: SeriesExtent;
}

function parseStateKey(key: string): { code: string; klineType: KlineType } | undefined {
  const colon = key.lastIndexOf(':');
  const klineType = Number(key.slice(colon + 1));
  if (colon <= 0 || !isKlineType(klineType)) return undefined;
  return { code: key.slice(0, colon), klineType };
}

/** The sync state as the commit log has it. */
function stateFromLog(log: DatasetLog): SyncState {
  const state = new SyncState();
  for (const [key, w] of log.series) {
    const parsed = parseStateKey(key);
    if (parsed !== undefined)
      state.set(parsed.code, parsed.klineType, { firstMs: w.first, lastMs: w.last, rows: w.rows });
  }
  return state;
}
