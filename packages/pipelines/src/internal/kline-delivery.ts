import { isKlineType, type BarUpdate, type KlineType } from '@quoteflow/core';
import { seriesKey } from '@quoteflow/operators';
import { DatasetWriter, KafkaSink, type KafkaSinkOptions, type WrittenFile } from '@quoteflow/sinks';
import type { KlineFilesOptions, KlineSyncEvent } from '../kline-sync-options.js';
import { PipelineError } from '../pipeline-error.js';
import { SyncState, widenExtent, type SeriesExtent } from '../sync-state.js';
import { listKlineFiles, readKlineExtents } from './read-kline-extents.js';

/** What {@link KlineDelivery.open} takes. */
export interface KlineDeliveryOptions {
  readonly files: KlineFilesOptions | undefined;
  readonly kafka: KafkaSinkOptions | undefined;
  readonly statePath: string | undefined;
  readonly live: boolean;
  readonly onUpdate: ((update: BarUpdate) => void) | undefined;
  readonly emitEvent: (event: KlineSyncEvent) => void;
}

/**
 * Where a K-line sync's bars go: closed bars to the dataset files, every update to Kafka and the
 * caller, and the state (what the dataset holds per series) advanced only once the files holding it are
 * durable, at each checkpoint.
 */
export class KlineDelivery {
  closedBars = 0;
  formingUpdates = 0;
  readonly files: WrittenFile[] = [];
  /** What each series got in the writer since the last checkpoint (the state learns it once durable). */
  readonly #pending = new Map<string, { code: string; klineType: KlineType; extent: SeriesExtent }>();
  readonly #kafkaInFlight = new Set<Promise<void>>();
  #kafkaError: unknown;

  private constructor(
    readonly state: SyncState,
    private readonly writer: DatasetWriter | undefined,
    private readonly kafka: KafkaSink | undefined,
    private readonly options: KlineDeliveryOptions,
  ) {}

  /** Loads the state (and the dataset files that landed after it), then opens the sinks. */
  static async open(options: KlineDeliveryOptions): Promise<KlineDelivery> {
    const state = options.statePath === undefined ? new SyncState() : await SyncState.load(options.statePath);
    if (options.files !== undefined) await reconcile(state, options.files.dir);
    const files = options.files;
    const writer =
      files === undefined
        ? undefined
        : new DatasetWriter({
            dir: files.dir,
            format: files.format ?? 'parquet',
            encoderThreads: files.encoderThreads ?? (options.live ? 0 : 1),
            ...(files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: files.maxFileAgeMs }),
            ...(files.fence === undefined ? {} : { fence: files.fence }),
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    return new KlineDelivery(state, writer, kafka, options);
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

  /** Makes the files durable and Kafka acknowledged, then advances and saves the state. */
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
    for (const { code, klineType, extent } of pending) this.state.record(code, klineType, extent);
    for (const f of files) {
      this.state.addFile(f.relativePath);
      this.files.push(f);
    }
    if (this.options.statePath !== undefined) await this.state.save(this.options.statePath);
    this.options.emitEvent({ type: 'checkpoint', files, closedBars: this.closedBars });
  }

  /**
   * Accounts for dataset files this sync did not write (another worker's, before a takeover).
   * Checkpoint first, so that this sync's own files are already accounted for.
   */
  async readNewFiles(): Promise<void> {
    if (this.options.files !== undefined) await reconcile(this.state, this.options.files.dir);
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

/** Accounts for dataset files that landed after the last state checkpoint (a crash in between). */
async function reconcile(state: SyncState, dir: string): Promise<void> {
  for (const rel of await listKlineFiles(dir)) {
    if (state.hasFile(rel)) continue;
    const { klineType, extents } = await readKlineExtents(dir, rel);
    if (!isKlineType(klineType)) continue;
    for (const [code, extent] of extents) state.record(code, klineType, extent);
    state.addFile(rel);
  }
}
