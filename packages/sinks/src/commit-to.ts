import {
  systemClock,
  type BarUpdate,
  type Clock,
  type GapMarker,
  type HistoryMarker,
  seriesKey,
} from '@quoteflow/core';
import { Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { CommittingSink, SinkCheckpoint } from './committing-sink.js';
import { FileSinkError } from './files/file-sink-error.js';

/** Options of {@link commitTo}. */
export interface CommitToOptions {
  /** The pipeline's clock: each sink is checkpointed every `checkpointEveryMs` of it. @defaultValue core's `systemClock` */
  readonly clock?: Clock;
  /** Checkpoints on demand besides the timers (before handing series to another worker, say). */
  readonly control?: CommitControl;
}

/**
 * Asks a running {@link commitTo} for a checkpoint of every sink now, e.g. before a cluster worker
 * hands series to another. Give it in `commitTo`'s options; one control serves one subscription.
 */
export class CommitControl {
  #run: (() => Promise<readonly SinkCheckpoint[]>) | undefined;

  /** Resolves once every sink committed what it took before the call. Rejects when not running. */
  checkpoint(): Promise<readonly SinkCheckpoint[]> {
    if (this.#run === undefined)
      return Promise.reject(
        new FileSinkError('QF_CLOSED', 'commitTo: not running, no checkpoint can be made'),
      );
    return this.#run();
  }

  /** @internal Bound by the running operator; unbound when it ends. */
  bind(run: (() => Promise<readonly SinkCheckpoint[]>) | undefined): void {
    this.#run = run;
  }
}

/**
 * Hands every bar update to each committing sink and checkpoints each on its own schedule (every
 * `sink.checkpointEveryMs` of the clock), emitting what each checkpoint committed. Sinks never wait
 * for one another: each commits its own watermarks, and a pipeline resumes each from its own.
 *
 * - Gap markers pass by (sinks take bars). History markers (`klineUpdates` brackets each series'
 *   backfill with them) go to every sink that has `mark`: Kafka holds a series' updates until its
 *   history ends, then takes them oldest first.
 * - Completion, or an error of the source: every sink takes `cut-short` for each series whose
 *   history began and did not end (what a sink held for order is taken, oldest first), commits what
 *   it took, then the stream completes (or forwards the error). Unsubscribing commits nothing more:
 *   what was taken or held since the last checkpoint is not committed, exactly as after kill -9.
 * - A sink that fails (a write, a marker or a checkpoint) errors the stream with its error, after
 *   the other sinks took `cut-short` for the open series and committed what they took. Nothing is
 *   reported committed that was not.
 *
 * The operator does not close the sinks: open them before, close them after.
 *
 * @example
 * ```ts
 * const files = await DatasetSink.open({ dir: './data' });
 * klineUpdates(client, { codes, klineTypes: [1], resumeFrom: [files] })
 *   .pipe(commitTo([files]))
 *   .subscribe((c) => console.log(`${c.sink}: ${c.closedBars} closed bars committed`));
 * ```
 */
export function commitTo(
  sinks: readonly CommittingSink[],
  options: CommitToOptions = {},
): OperatorFunction<BarUpdate | GapMarker | HistoryMarker, SinkCheckpoint> {
  if (!Array.isArray(sinks) || sinks.length === 0)
    throw new FileSinkError(
      'QF_INVALID_OPTION',
      'commitTo: "sinks" must be a non-empty array of committing sinks',
    );
  const clock = options.clock ?? systemClock;
  return (source) =>
    new Observable<SinkCheckpoint>((subscriber) => {
      const run = new CommitRun(sinks, clock, subscriber);
      options.control?.bind(() => run.checkpointAll());
      const subscription = source.subscribe({
        next: (update) => run.take(update),
        error: (err: unknown) => void run.finish(err),
        complete: () => void run.finish(undefined),
      });
      return () => {
        options.control?.bind(undefined);
        run.stop();
        subscription.unsubscribe();
      };
    });
}

/** One subscription of {@link commitTo}: the sinks' timers and their checkpoint chains. */
class CommitRun {
  readonly #timers = new Map<CommittingSink, unknown>();
  readonly #chains = new Map<CommittingSink, Promise<unknown>>();
  /** No more timers: the source ended, a sink failed, or the subscriber left. */
  #ending = false;
  /** Nothing more is emitted. */
  #stopped = false;
  #failed = false;
  /** Series whose history began and has not ended (`seriesKey` → its `begin` marker). */
  readonly #histories = new Map<string, HistoryMarker>();

  constructor(
    private readonly sinks: readonly CommittingSink[],
    private readonly clock: Clock,
    private readonly subscriber: Subscriber<SinkCheckpoint>,
  ) {
    for (const sink of sinks) this.#arm(sink);
  }

  take(update: BarUpdate | GapMarker | HistoryMarker): void {
    if (this.#stopped || update.type === 'gap') return;
    if (update.type === 'history') {
      this.#note(update);
      for (const sink of this.sinks) if (!this.#mark(sink, update)) break;
      return;
    }
    for (const sink of this.sinks) {
      try {
        sink.write(update);
      } catch (err) {
        void this.#fail(sink, err);
        return;
      }
    }
  }

  /** A checkpoint of every sink, each after those already queued for it. */
  checkpointAll(): Promise<readonly SinkCheckpoint[]> {
    return Promise.all(this.sinks.map((sink) => this.#checkpoint(sink)));
  }

  /** The source ended: every sink commits what it took; then the stream ends as the source did. */
  async finish(sourceError: unknown): Promise<void> {
    if (this.#ending) return;
    this.#disarm();
    this.#cutShort(this.sinks);
    try {
      await this.checkpointAll();
    } catch {
      return; // #fail reported it
    }
    this.#stopped = true;
    if (sourceError === undefined) this.subscriber.complete();
    else this.subscriber.error(sourceError);
  }

  stop(): void {
    this.#stopped = true;
    this.#disarm();
  }

  #checkpoint(sink: CommittingSink): Promise<SinkCheckpoint> {
    const previous = this.#chains.get(sink) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (this.#failed)
        throw new FileSinkError('QF_CLOSED', `commitTo: ${sink.name}: not checkpointed, the pipeline failed`);
      try {
        const done = await sink.checkpoint();
        if (!this.#stopped) this.subscriber.next(done);
        return done;
      } catch (err) {
        await this.#fail(sink, err);
        throw err;
      }
    });
    this.#chains.set(
      sink,
      next.catch(() => undefined),
    );
    return next;
  }

  /** The sink failed: the others commit what they took, then the stream errors with its error. */
  async #fail(failed: CommittingSink, err: unknown): Promise<void> {
    if (this.#failed || this.#stopped) return;
    this.#failed = true;
    this.#disarm();
    // What the other sinks took is still theirs to commit; their failures are secondary.
    const others = this.sinks.filter((s) => s !== failed);
    this.#cutShort(others);
    await Promise.allSettled(
      others.map((s) => (this.#chains.get(s) ?? Promise.resolve()).then(() => s.checkpoint())),
    );
    this.#stopped = true;
    this.subscriber.error(err);
  }

  #note(marker: HistoryMarker): void {
    const key = seriesKey(marker.code, marker.klineType);
    if (marker.phase === 'begin') this.#histories.set(key, marker);
    else this.#histories.delete(key);
  }

  /** Hands a history marker to a sink that takes them; false (the pipeline fails) if it threw. */
  #mark(sink: CommittingSink, marker: HistoryMarker): boolean {
    try {
      sink.mark?.(marker);
      return true;
    } catch (err) {
      void this.#fail(sink, err);
      return false;
    }
  }

  /** The stream ends: each series whose history is still open is cut short, in every sink. */
  #cutShort(sinks: readonly CommittingSink[]): void {
    const open = [...this.#histories.values()];
    this.#histories.clear();
    for (const begun of open) {
      const marker: HistoryMarker = { ...begun, phase: 'cut-short' };
      for (const sink of sinks) this.#mark(sink, marker);
    }
  }

  #arm(sink: CommittingSink): void {
    if (this.#ending || !(sink.checkpointEveryMs > 0)) return;
    this.#timers.set(
      sink,
      this.clock.setTimeout(() => {
        this.#timers.delete(sink);
        this.#checkpoint(sink).then(
          () => this.#arm(sink),
          () => undefined,
        );
      }, sink.checkpointEveryMs),
    );
  }

  #disarm(): void {
    this.#ending = true;
    for (const handle of this.#timers.values()) this.clock.clearTimeout(handle);
    this.#timers.clear();
  }
}
