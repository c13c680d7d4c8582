import type { Exchange, QuoteflowClient } from '@quoteflow/core';
import { createSuspensionDiffer, type SuspensionChange, type SuspensionDiffer } from '@quoteflow/operators';
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

/** Options of {@link suspensionWatch}. */
export interface SuspensionWatchOptions {
  readonly client: QuoteflowClient;
  readonly exchanges: readonly Exchange[];
  /** Pause between rounds over all exchanges (the scheduler allows one suspension query a minute). @defaultValue 60,000 ms */
  readonly intervalMs?: number;
  /** New and changed records to the suspension dataset (`DIR/suspension/exchange=E/…`). */
  readonly files?: { readonly dir: string; readonly format?: DatasetFormat; readonly maxFileAgeMs?: number };
  /** New and changed records to `<prefix>.suspension`. */
  readonly kafka?: KafkaSinkOptions;
  /** Whether the first snapshot reports every record as new. @defaultValue true */
  readonly emitInitial?: boolean;
  readonly signal?: AbortSignal;
  /** Every change: new, changed and removed (records that aged out of the service's year). */
  readonly onChange?: (change: SuspensionChange) => void;
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** Counts of a suspension watch. */
export interface SuspensionWatchSummary {
  readonly polls: number;
  readonly changes: number;
  readonly files: readonly WrittenFile[];
}

/** Defaults of {@link SuspensionWatchOptions}. */
export const SUSPENSION_WATCH_DEFAULTS = { intervalMs: 60_000 } as const;

/**
 * Suspension watch: polls the suspension endpoint of each exchange (one query a minute at most,
 * the plan's rule, enforced by the scheduler), and emits only new, changed and removed records
 * (`suspensionChanges`' state machine); new and changed ones also go to files and/or Kafka.
 *
 * @example
 * ```ts
 * const watch = suspensionWatch({ client, exchanges: ['nyse', 'nasdaq'], emitInitial: false, onChange: (c) => alert(c) });
 * ```
 */
export function suspensionWatch(options: SuspensionWatchOptions): PipelineHandle<SuspensionWatchSummary> {
  const { client, exchanges } = options;
  if (exchanges.length === 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', 'suspensionWatch: "exchanges" must not be empty');
  const intervalMs = options.intervalMs ?? SUSPENSION_WATCH_DEFAULTS.intervalMs;
  const stop = new AbortController();
  const signal = stop.signal;
  const onOuter = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted === true) stop.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onOuter, { once: true });
  let polls = 0;
  let changes = 0;

  const run = async (): Promise<SuspensionWatchSummary> => {
    const writer =
      options.files === undefined
        ? undefined
        : new DatasetWriter({
            dir: options.files.dir,
            format: options.files.format ?? 'parquet',
            ...(options.files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: options.files.maxFileAgeMs }),
          });
    const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
    const differs = new Map<Exchange, SuspensionDiffer>(
      exchanges.map((e) => [e, createSuspensionDiffer({ emitInitial: options.emitInitial ?? true })]),
    );
    const files: WrittenFile[] = [];
    let failure: unknown;
    try {
      while (!signal.aborted) {
        const started = Date.now();
        for (const exchange of exchanges) {
          if (signal.aborted) break;
          try {
            const snapshot = await client.suspensions(exchange, { signal, sourceId: 'suspension-watch' });
            polls++;
            const found = differs.get(exchange)!.diff(snapshot);
            changes += found.length;
            const toWrite = found.filter((c) => c.change !== 'removed').map((c) => c.record);
            if (writer !== undefined && toWrite.length > 0) {
              await writer.write(toWrite);
              files.push(...(await writer.flush()));
            }
            if (kafka !== undefined) await Promise.all(toWrite.map((r) => kafka.write(r)));
            for (const c of found) options.onChange?.(c);
          } catch (err) {
            if (signal.aborted) break;
            const code = err instanceof Error && 'code' in err ? err.code : undefined;
            if (code === 'QF_UNAUTHORIZED_TOKEN' || code === 'QF_INVALID_OPTION') throw err;
            options.onWarning?.(`suspension poll of ${exchange} failed; retrying at the next round`, err);
          }
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
    return { polls, changes, files };
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
