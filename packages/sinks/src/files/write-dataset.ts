import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { DatasetRecord } from './dataset-columns.js';
import { DatasetWriter } from './dataset-writer.js';
import type { DatasetWriterOptions, WrittenFile } from './dataset-writer-options.js';

/** Options of {@link writeDataset}: those of {@link DatasetWriter} minus the callbacks it owns. */
export type WriteDatasetOptions = Omit<DatasetWriterOptions, 'onFile' | 'onError'>;

/**
 * Writes every record into the datasets under `options.dir` (see {@link DatasetWriter}) and emits
 * each file once it is committed and renamed into place. With `series`, the source is subscribed
 * once the writer claimed them in their tables: a claim refused errors the stream (`QF_OWNED`)
 * before anything was read, and one that waited until `signal` stopped it completes it.
 *
 * Completes after the source completes and every buffered row is on disk. A source error first
 * flushes what arrived, then is forwarded. A failed file write errors the stream with a
 * `FileSinkError` (`QF_FILE_WRITE`). Unsubscribing early still flushes buffered rows (in the
 * background) and stops the encoder threads. Each subscription has its own writer.
 *
 * @example
 * ```ts
 * bars$.pipe(writeDataset({ dir: './data', maxFileAgeMs: 10_000 })).subscribe((f) => console.log(f.relativePath));
 * ```
 */
export function writeDataset(options: WriteDatasetOptions): OperatorFunction<DatasetRecord, WrittenFile> {
  return (source) =>
    new Observable<WrittenFile>((subscriber) => {
      let done = false;
      const writer = new DatasetWriter({
        ...options,
        onFile: (file) => {
          if (!done) subscriber.next(file);
        },
        onError: (err) => {
          if (done) return;
          done = true;
          subscriber.error(err);
        },
      });
      const finish = (sourceError: { err: unknown } | undefined): void => {
        writer.close().then(
          () => {
            if (done) return;
            done = true;
            if (sourceError === undefined) subscriber.complete();
            else subscriber.error(sourceError.err);
          },
          (err: unknown) => {
            if (done) return;
            done = true;
            subscriber.error(sourceError === undefined ? err : sourceError.err);
          },
        );
      };
      let sub: Subscription | undefined;
      const subscribe = (): void => {
        if (done) return;
        sub = source.subscribe({
          next: (record) => {
            if (done) return;
            try {
              writer.append(record);
            } catch (err) {
              done = true;
              subscriber.error(err);
            }
          },
          error: (err: unknown) => finish({ err }),
          complete: () => finish(undefined),
        });
      };
      // With `series`, the source is subscribed once the writer claimed them: a cold source
      // (polling a service) sends nothing before the tables accepted this writer.
      if (Object.values(options.series ?? {}).every((s) => s.length === 0)) subscribe();
      else
        writer.ready().then(subscribe, (err: unknown) => {
          // Stopped while waiting for another writer: nothing was taken, the stream just ends.
          if (options.signal?.aborted === true) finish(undefined);
          else if (!done) {
            done = true;
            subscriber.error(err);
          }
        });
      return () => {
        done = true;
        sub?.unsubscribe();
        // Idempotent; on early unsubscribe, rows already received still reach the disk.
        writer.close().catch(() => undefined);
      };
    });
}
