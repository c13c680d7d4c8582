import {
  KafkaSink,
  toKafka,
  writeDataset,
  type DatasetRecord,
  type KafkaRecord,
  type KafkaSinkOptions,
  type WriteDatasetOptions,
  type WrittenFile,
} from '@quoteflow/sinks';
import { Subject, connectable, defer, tap, type Observable } from 'rxjs';
import { PipelineError } from '../pipeline-error.js';
import { NewestFiles } from './newest-files.js';

/** Options of {@link drainToSinks}. */
export interface DrainToSinksOptions {
  /** The pipeline's name, for error messages (`depthCapture`). */
  readonly pipeline: string;
  /** Records to the datasets through the sinks' `writeDataset` operator. */
  readonly files: WriteDatasetOptions | undefined;
  /** Records to Kafka through the sinks' `toKafka` operator and one `KafkaSink`. */
  readonly kafka: KafkaSinkOptions | undefined;
  /** Stops the source (which must then complete), so the sinks that did not fail flush what they hold. */
  readonly stop: (reason: unknown) => void;
}

/**
 * Runs `records$` into the sinks until it ends: each sink is one subscriber of a single shared run
 * of the source, connected once all of them have subscribed. Resolves when the source completed
 * and every sink flushed (files renamed into place, records acknowledged, the Kafka sink closed),
 * with the files written (the newest, and their count). Rejects with the source's error once the
 * sinks flushed what came before it, or with a `QF_PIPELINE` error naming the sink that failed; a
 * sink failure first stops the source, so the other sinks still flush. Without sinks it just runs
 * the source. With files, the source is connected once their writer claimed its series (a refused
 * claim rejects before any record is read).
 */
export async function drainToSinks<T extends DatasetRecord & KafkaRecord>(
  records$: Observable<T>,
  options: DrainToSinksOptions,
): Promise<NewestFiles<WrittenFile>> {
  const kafka = options.kafka === undefined ? undefined : new KafkaSink(options.kafka);
  let sourceError: { error: unknown } | undefined;
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    failure ??= { error };
    options.stop(error);
  };
  const sinkError = (sink: string, error: unknown): PipelineError =>
    new PipelineError(
      'QF_PIPELINE',
      `${options.pipeline}: the ${sink} sink failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );

  const shared$ = connectable(
    records$.pipe(
      tap({
        error: (error: unknown) => {
          sourceError ??= { error };
        },
      }),
    ),
    { connector: () => new Subject<T>(), resetOnDisconnect: false },
  );
  const files = new NewestFiles<WrittenFile>();
  // The files branch subscribes once its writer claimed its series in their tables (see
  // writeDataset): the source is connected only then, so no request goes out before the table
  // accepted this writer, and no record is missed.
  let filesSubscribed!: () => void;
  const filesReady = new Promise<void>((resolve) => (filesSubscribed = resolve));
  const drain = (sink: string | undefined, branch$: Observable<unknown>): Promise<void> =>
    new Promise<void>((resolve) => {
      branch$.subscribe({
        complete: resolve,
        error: (error: unknown) => {
          // The sinks forward the source's error after flushing; anything else is the sink's own.
          const own = sink !== undefined && (sourceError === undefined || error !== sourceError.error);
          fail(own ? sinkError(sink, error) : error);
          resolve();
        },
      });
    });
  const branches: Promise<void>[] = [];
  if (options.files !== undefined) {
    const filesBranch = drain(
      'files',
      defer(() => {
        filesSubscribed();
        return shared$;
      }).pipe(
        writeDataset(options.files),
        tap((file) => files.add([file])),
      ),
    );
    branches.push(filesBranch);
    await Promise.race([filesReady, filesBranch]);
  }
  // A files sink that failed before it subscribed (its claim refused) leaves nothing to run.
  if (failure === undefined) {
    if (kafka !== undefined) branches.push(drain('Kafka', shared$.pipe(toKafka<T>(kafka))));
    if (branches.length === 0) branches.push(drain(undefined, shared$));
  }
  const connection = failure === undefined ? shared$.connect() : undefined;
  try {
    await Promise.all(branches);
  } finally {
    connection?.unsubscribe();
    // toKafka waits for the acknowledgements of what it wrote; closing flushes the rest and disconnects.
    await kafka?.close().catch((error: unknown) => {
      failure ??= { error: sinkError('Kafka', error) };
    });
  }
  if (failure !== undefined) throw failure.error;
  return files;
}
