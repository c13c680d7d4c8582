import { pollDepth, type Clock, type DepthTick, type QuoteflowClient } from '@quoteflow/core';
import { estimatePlan, limitOverridesOf } from '@quoteflow/core/internal';
import { dedupeBySeq, type DedupeBySeqOptions } from '@quoteflow/operators';
import type { KafkaSinkOptions, WrittenFile } from '@quoteflow/sinks';
import { tap } from 'rxjs';
import { checkIntervalMs, pollPipeline } from './internal/poll-pipeline.js';
import { retryTransient } from './internal/retry-transient.js';
import type { PipelineHandle } from './pipeline-handle.js';
import { PipelineError } from './pipeline-error.js';
import type { PipelineFilesOptions } from './pipeline-files-options.js';

/** Options of {@link depthCapture}. */
export interface DepthCaptureOptions {
  readonly client: QuoteflowClient;
  readonly codes: readonly string[];
  /** Poll interval; never faster than the plan allows. @defaultValue the plan's depth period (`estimatePlan`) */
  readonly intervalMs?: number;
  /** Depth dataset files (`DIR/depth/…`); a file is finished `maxFileAgeMs` after its first row (default 60 s) and on stop. */
  readonly files?: PipelineFilesOptions;
  /** Ticks to `<prefix>.depth`. */
  readonly kafka?: KafkaSinkOptions;
  /** The clock of polls, retries and file ages. @defaultValue the client's clock */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  /** How repeated ticks are dropped (`dedupeBySeq`'s options: ticks without `seq`, memory bound). */
  readonly dedupe?: DedupeBySeqOptions;
  /** Every new tick (repeated `seq` dropped). */
  readonly onTick?: (tick: DepthTick) => void;
  /** A poll failed (retried at the next interval), or `onTick` threw. */
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** Counts of a depth capture. */
export interface DepthCaptureSummary {
  readonly polls: number;
  readonly ticks: number;
  /** Ticks dropped because their `seq` did not advance. */
  readonly repeated: number;
  /** Files written by this run: the newest 1,000. */
  readonly files: readonly WrittenFile[];
  /** Every file written by this run. */
  readonly fileCount: number;
}

/**
 * Depth capture, composed of the same public pieces a user would compose: core's `pollDepth`
 * (`/depth-tick` for `codes` at the plan's pace, on the clock), the `dedupeBySeq` operator (a tick
 * whose `seq` did not advance is dropped), and the sinks' `writeDataset` and `toKafka` operators
 * (the depth dataset and/or `<prefix>.depth`). Either book side may be empty (limit-up or
 * limit-down); such a tick is written like any other.
 *
 * A transient poll failure is reported to `onWarning` and the next poll goes ahead; a fatal one
 * (refused token, unknown code) ends the capture: `done` rejects with it once the sinks flushed.
 * `stop()` (or `signal`) completes the source, so every sink flushes and `done` resolves; a sink
 * that fails rejects `done` with a `QF_PIPELINE` error naming it.
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
  checkIntervalMs('depthCapture', options.intervalMs);
  const planned =
    estimatePlan(
      client.plan,
      { codes: [], klineTypes: [], bars: 0, depthCodes: codes },
      limitOverridesOf(client.limits),
    ).live.depthPeriodMs ?? 1_000;
  const intervalMs = Math.max(options.intervalMs ?? planned, planned);
  return pollPipeline('depthCapture', options, { depth: codes }, (kit) => {
    let polls = 0;
    let received = 0;
    let ticks = 0;
    // Each poll yields one tick per code (client.depth answers every code asked, in order), so the
    // ticks of the first code count the polls.
    const firstCode = codes[0]!;
    const records$ = pollDepth(client, {
      codes,
      intervalMs,
      sourceId: 'depth-capture',
      scheduler: kit.scheduler,
    }).pipe(
      retryTransient({
        delayMs: intervalMs,
        clock: kit.clock,
        onRetry: (err) => kit.warn('depth poll failed; retrying at the next interval', err),
      }),
      kit.untilStopped(),
      tap((tick) => {
        received++;
        if (tick.code === firstCode) polls++;
      }),
      dedupeBySeq(options.dedupe),
      tap(() => ticks++),
      kit.toListener('onTick', options.onTick),
    );
    return {
      records$,
      summary: (files) => ({
        polls,
        ticks,
        repeated: received - ticks,
        files: files.newest,
        fileCount: files.count,
      }),
    };
  });
}
