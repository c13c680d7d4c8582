import { isKlineType, type BarUpdate, type KlineType } from '@quoteflow/core';
import { seriesKey } from '@quoteflow/operators';
import { DatasetWriter, KafkaSink, type KafkaSinkOptions, type WrittenFile } from '@quoteflow/sinks';
import type { KlineFilesOptions, KlineSyncEvent } from '../kline-sync-options.js';
import { PipelineError } from '../pipeline-error.js';
import { SyncState } from '../sync-state.js';
import { listKlineFiles, readKlineMaxima } from './read-kline-maxima.js';

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
 * caller, and the state (last closed bar per series) advanced only once the files holding it are
 * durable, at each checkpoint.
 */
export class KlineDelivery {
  closedBars = 0;
  formingUpdates = 0;
  readonly files: WrittenFile[] = [];
  /** Newest closed start per series appended to the writer since the last checkpoint. */
  readonly #pendingMarks = new Map<string, [code: string, klineType: KlineType, tsMs: number]>();
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
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    return new KlineDelivery(state, writer, kafka, options);
  }

  /** A closed bar to the files (or the state, without files); every update to Kafka and the caller. */
  deliver(u: BarUpdate): void {
    if (u.final) {
      this.closedBars++;
      if (this.writer !== undefined) {
        this.writer.append(u);
        this.#pendingMarks.set(seriesKey(u.code, u.klineType), [u.code, u.klineType, u.tsMs]);
      } else {
        this.state.advance(u.code, u.klineType, u.tsMs);
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
    const marks = [...this.#pendingMarks.values()];
    this.#pendingMarks.clear();
    const files = this.writer === undefined ? [] : await this.writer.flush();
    if (this.kafka !== undefined) {
      await this.kafka.flush();
      if (this.#kafkaError !== undefined)
        throw new PipelineError('QF_PIPELINE', 'klineSync: Kafka delivery failed', {
          cause: this.#kafkaError,
        });
    }
    for (const [code, klineType, tsMs] of marks) this.state.advance(code, klineType, tsMs);
    for (const f of files) {
      this.state.addFile(f.relativePath);
      this.files.push(f);
    }
    if (this.options.statePath !== undefined) await this.state.save(this.options.statePath);
    this.options.emitEvent({ type: 'checkpoint', files, closedBars: this.closedBars });
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
    const { klineType, maxima } = await readKlineMaxima(dir, rel);
    if (!isKlineType(klineType)) continue;
    for (const [code, tsMs] of maxima) state.advance(code, klineType, tsMs);
    state.addFile(rel);
  }
}
