import { estimatePlan, type DepthTick, type QuoteflowClient } from '@quoteflow/core';
import { createSeqDeduper } from '@quoteflow/operators';
import {
  DatasetWriter,
  KafkaSink,
  type DatasetFormat,
  type KafkaSinkOptions,
  type WrittenFile,
} from '@quoteflow/sinks';
import { abortableDelay } from './internal/abortable-delay.js';
import type { PipelineHandle } from './kline-sync.js';
import { PipelineError } from './pipeline-error.js';

/** Options of {@link depthCapture}. */
export interface DepthCaptureOptions {
  readonly client: QuoteflowClient;
  readonly codes: readonly string[];
  /** Poll interval; never faster than the plan allows. @defaultValue the plan's depth period (`estimatePlan`) */
  readonly intervalMs?: number;
  /** Depth dataset files (`DIR/depth/…`). */
  readonly files?: { readonly dir: string; readonly format?: DatasetFormat; readonly maxFileAgeMs?: number };
  /** Ticks to `<prefix>.depth`. */
  readonly kafka?: KafkaSinkOptions;
  readonly signal?: AbortSignal;
  /** Every new tick (repeated `seq` dropped). */
  readonly onTick?: (tick: DepthTick) => void;
  /** A poll failed (retried at the next interval). */
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** Counts of a depth capture. */
export interface DepthCaptureSummary {
  readonly polls: number;
  readonly ticks: number;
  /** Ticks dropped because their `seq` did not advance. */
  readonly repeated: number;
  readonly files: readonly WrittenFile[];
}

/**
 * Depth capture: polls `/depth-tick` for `codes` at the plan's pace, drops ticks whose `seq` did
 * not advance (`dedupeBySeq`'s state machine), and writes the rest to the depth dataset and/or
 * Kafka. `stop()` flushes both.
 *
 * @example
 * ```ts
 * const capture = depthCapture({ client, codes: ['BTCUSDT', '700.HK'], kafka: { brokers: 'localhost:9092' } });
 * setTimeout(() => void capture.stop(), 60_000);
 * console.log(await capture.done);
 * ```
 */
export function depthCapture(options: DepthCaptureOptions): PipelineHandle<DepthCaptureSummary> {
  const { client, codes } = options;
  if (codes.length === 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', 'depthCapture: "codes" must not be empty');
  if (options.files === undefined && options.kafka === undefined && options.onTick === undefined) {
    throw new PipelineError('QF_PIPELINE_CONFIG', 'depthCapture: give "files", "kafka" or "onTick"');
  }
  const planned =
    estimatePlan(client.plan, { codes: [], klineTypes: [], bars: 0, depthCodes: codes }, client.limits).live
      .depthPeriodMs ?? 1_000;
  const intervalMs = Math.max(options.intervalMs ?? planned, planned);
  const stop = new AbortController();
  const signal = stop.signal;
  const onOuter = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted === true) stop.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onOuter, { once: true });
  let polls = 0;
  let ticks = 0;
  let repeated = 0;

  const run = async (): Promise<DepthCaptureSummary> => {
    const writer =
      options.files === undefined
        ? undefined
        : new DatasetWriter({
            dir: options.files.dir,
            format: options.files.format ?? 'parquet',
            ...(options.files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: options.files.maxFileAgeMs }),
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    const deduper = createSeqDeduper();
    const files: WrittenFile[] = [];
    let failure: unknown;
    try {
      while (!signal.aborted) {
        const started = Date.now();
        try {
          const batch = await client.depth(codes, { signal, sourceId: 'depth-capture' });
          polls++;
          const fresh: DepthTick[] = [];
          for (const tick of batch) {
            if (deduper.accept(tick)) fresh.push(tick);
            else repeated++;
          }
          ticks += fresh.length;
          if (writer !== undefined) await writer.write(fresh);
          if (kafka !== undefined) await Promise.all(fresh.map((t) => kafka.write(t)));
          for (const t of fresh) options.onTick?.(t);
        } catch (err) {
          if (signal.aborted) break;
          const code = err instanceof Error && 'code' in err ? err.code : undefined;
          if (
            code === 'QF_UNAUTHORIZED_TOKEN' ||
            code === 'QF_INVALID_CODE' ||
            code === 'QF_UNAUTHORIZED_CODE' ||
            code === 'QF_INVALID_OPTION'
          )
            throw err;
          options.onWarning?.('depth poll failed; retrying at the next interval', err);
        }
        await abortableDelay(intervalMs - (Date.now() - started), signal);
      }
    } catch (err) {
      failure = err;
    } finally {
      options.signal?.removeEventListener('abort', onOuter);
      try {
        if (writer !== undefined) files.push(...(await writer.flush()));
        await writer?.close();
      } catch (err) {
        failure ??= err;
      }
      await kafka?.close().catch((err: unknown) => {
        failure ??= err;
      });
    }
    if (failure !== undefined) throw failure;
    return { polls, ticks, repeated, files };
  };
  const done = run();
  done.catch(() => undefined);
  return {
    done,
    stop: () => {
      stop.abort(new Error('stopped'));
      return done;
    },
  };
}
