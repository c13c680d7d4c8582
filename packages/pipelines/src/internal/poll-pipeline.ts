/**
 * The skeleton `depthCapture` and `suspensionWatch` share: options checked, one clock and its
 * scheduler, warnings that cannot throw, a stop (by `stop()` or the caller's signal) that
 * completes the source, and the records drained into the dataset and/or Kafka sinks until they end.
 * Each pipeline brings only its records: what it polls, how it retries and what it counts.
 */
import { clockScheduler, type Clock, type QuoteflowClient } from '@quoteflow/core';
import type { DatasetRecord, KafkaRecord, KafkaSinkOptions, WrittenFile } from '@quoteflow/sinks';
import { takeUntil, tap, type MonoTypeOperatorFunction, type Observable, type SchedulerLike } from 'rxjs';
import { PipelineError } from '../pipeline-error.js';
import { tableWriterOptions, type PipelineFilesOptions } from '../pipeline-files-options.js';
import type { PipelineHandle } from '../pipeline-handle.js';
import { drainToSinks } from './drain-to-sinks.js';
import { fromAbortSignal } from './from-abort-signal.js';
import type { NewestFiles } from './newest-files.js';
import { StopControl } from './stop-control.js';

/** The options every polling pipeline takes. */
export interface PollPipelineOptions {
  readonly client: QuoteflowClient;
  readonly intervalMs?: number;
  readonly files?: PipelineFilesOptions;
  readonly kafka?: KafkaSinkOptions;
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** What the skeleton hands a pipeline to build its records with. */
export interface PollPipelineKit {
  readonly clock: Clock;
  readonly scheduler: SchedulerLike;
  /** `onWarning`, whose throw is swallowed: a listener's failure must not stop the data. */
  warn(message: string, error: unknown): void;
  /** Completes the source when the pipeline stops (aborting the request in flight), so the sinks flush and end. */
  untilStopped<T>(): MonoTypeOperatorFunction<T>;
  /** Hands each value to a user's callback; a throw is a warning (`<name> threw`), not an error. */
  toListener<T>(name: string, listener: ((value: T) => void) | undefined): MonoTypeOperatorFunction<T>;
}

/** A polling pipeline's records and the summary of its run. */
export interface PollPipelineRun<T, S> {
  readonly records$: Observable<T>;
  summary(files: NewestFiles<WrittenFile>): S;
}

/** Refuses an `intervalMs` that is not a positive number of ms. */
export function checkIntervalMs(pipeline: string, intervalMs: unknown): void {
  if (
    intervalMs !== undefined &&
    (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs <= 0)
  ) {
    throw new PipelineError(
      'QF_PIPELINE_CONFIG',
      `${pipeline}: "intervalMs" must be a positive number of ms, got ${JSON.stringify(intervalMs)}`,
    );
  }
}

/**
 * Runs a polling pipeline: `build` makes its records from the kit; they are drained into the
 * sinks of `options` (files under `series`) until the source ends or the pipeline stops.
 */
export function pollPipeline<T extends DatasetRecord & KafkaRecord, S>(
  pipeline: 'depthCapture' | 'suspensionWatch',
  options: PollPipelineOptions,
  series: Readonly<Record<string, readonly string[]>>,
  build: (kit: PollPipelineKit) => PollPipelineRun<T, S>,
): PipelineHandle<S> {
  const clock = options.clock ?? options.client.clock;
  const warn = (message: string, error: unknown): void => {
    try {
      options.onWarning?.(message, error);
    } catch {
      // A listener's failure must not stop the data.
    }
  };
  const control = new StopControl(options.signal);
  const signal = control.signal;
  const { records$, summary } = build({
    clock,
    scheduler: clockScheduler(clock),
    warn,
    untilStopped: () => takeUntil(fromAbortSignal(signal)),
    toListener: (name, listener) =>
      tap((value) => {
        try {
          listener?.(value);
        } catch (err) {
          warn(`${name} threw`, err);
        }
      }),
  });
  const files = options.files;
  const run = async (): Promise<S> => {
    try {
      const written = await drainToSinks(records$, {
        pipeline,
        files:
          files === undefined
            ? undefined
            : {
                ...tableWriterOptions(files, signal, warn),
                format: files.format ?? 'parquet',
                clock,
                series,
              },
        kafka: options.kafka,
        stop: (reason) => control.stop(reason),
      });
      return summary(written);
    } finally {
      control.release();
    }
  };
  return control.handle(run());
}
