import { type BarUpdate, type Clock, type GapMarker, type HistoryMarker, seriesKey } from '@quoteflow/core';
import type { KafkaKlineSinkOptions } from '@quoteflow/sinks';
import type { Halt } from '@quoteflow/operators/internal';
import {
  CommitControl,
  commitTo,
  DatasetSink,
  KafkaKlineSink,
  type CommittingSink,
  type SinkCheckpoint,
} from '@quoteflow/sinks';
import { isS3Url } from '@quoteflow/sinks/internal';
import type { Observable } from 'rxjs';
import { Subject, takeUntil, tap } from 'rxjs';
import { isAbort } from './internal/error-kinds.js';
import { fromAbortSignal } from './internal/from-abort-signal.js';
import { healDataset } from './internal/heal-dataset.js';
import { HeldRowsSink } from './internal/held-rows-sink.js';
import { checkUniverse } from './internal/kline-universe.js';
import { missingCommittedFiles } from './missing-committed-files.js';
import { NewestFiles } from './internal/newest-files.js';
import { resumePointOf } from './internal/resume-points.js';
import { ServiceHalts } from './internal/service-halts.js';
import { StateFileSink } from './internal/state-file-sink.js';
import { StopControl } from './internal/stop-control.js';
import {
  KLINE_SYNC_DEFAULTS,
  type DatasetRepair,
  type IncompleteSeries,
  type KlineSyncEvent,
  type KlineSyncHandle,
  type KlineSyncOptions,
  type KlineSyncSummary,
} from './kline-sync-options.js';
import { klineUpdates, type KlineUniverseChange } from './kline-updates.js';
import { PipelineError } from './pipeline-error.js';
import { readHalts } from './read-halts.js';

/**
 * K-line sync, the service's recommended usage done right, composed of the public pieces a user
 * composes: {@link klineUpdates} (core's pager and poller into `mergeBars`, which alone decides
 * finality) into the committing sinks (`DatasetSink` for files, a Kafka sink, the state file)
 * through `commitTo`, each sink checkpointed on its own schedule and resumed from its own
 * watermarks, so a restart, a crash or a takeover neither repeats nor skips a closed bar in any.
 *
 * - First run: N closed bars of history per series, then live polling. A restart resumes each
 *   series from the oldest watermark of its sinks, and a series its sinks hold fewer than N bars of
 *   grows backwards (where the code can page back).
 * - Around it: halts that explain missing bars (the dataset's suspension records, read again at
 *   each checkpoint of the files, and with `serviceHalts` the service's), events, counts, and
 *   `add`/`remove` of codes while it runs (a cluster worker's takeovers).
 *
 * @example
 * ```ts
 * const sync = klineSync({ client, codes: ['BTCUSDT', 'AAPL.US'], klineTypes: [1], files: { dir: './data' } });
 * process.on('SIGINT', () => void sync.stop());
 * const summary = await sync.done;
 * ```
 */
export function klineSync(options: KlineSyncOptions): KlineSyncHandle {
  checkUniverse(options.codes, options.klineTypes);
  const bars = options.bars ?? KLINE_SYNC_DEFAULTS.bars;
  if (!Number.isInteger(bars) || bars < 0)
    throw new PipelineError('QF_PIPELINE_CONFIG', `klineSync: "bars" must be an integer >= 0, got ${bars}`);
  const control = new StopControl(options.signal);
  const run = new SyncRun(options, control.signal);
  const handle = control.handle(run.run().finally(() => control.release()));
  const untilEnded = settledByEnd(handle.done);
  return {
    ...handle,
    add: (more) => {
      checkUniverse(more, options.klineTypes);
      if (control.signal.aborted)
        return Promise.reject(new PipelineError('QF_PIPELINE', 'klineSync: stopped, no codes can be added'));
      return untilEnded(run.add(more), 'added');
    },
    remove: (less) => {
      if (control.signal.aborted)
        return Promise.reject(
          new PipelineError('QF_PIPELINE', 'klineSync: not running, no codes can be removed'),
        );
      return untilEnded(run.remove(less), 'removed');
    },
  };
}

/**
 * A change of the universe settles by the time the run ends: one the run did not apply before it
 * ended (it failed, was fenced or stopped meanwhile, or never started its stream) is refused then,
 * not left pending for ever (a cluster worker waits for it before its next change).
 */
function settledByEnd(done: Promise<unknown>) {
  const ended = done.then(
    () => undefined,
    (err: unknown) => err,
  );
  return <T>(change: Promise<T>, what: string): Promise<T> =>
    Promise.race([
      change,
      ended.then((cause) => {
        throw new PipelineError('QF_PIPELINE', `klineSync: the run ended before the codes were ${what}`, {
          cause,
        });
      }),
    ]);
}

/** One run of {@link klineSync}: its sinks, its halts, its counts. */
class SyncRun {
  readonly #clock: Clock;
  readonly #universe: string[];
  readonly #changes = new Subject<KlineUniverseChange>();
  readonly #commits = new CommitControl();
  readonly #truncated = new Set<string>();
  /** Series whose backfill finished, and final bars delivered per series (`seriesKey`). */
  readonly #backfilled = new Set<string>();
  readonly #delivered = new Map<string, number>();
  #incomplete: IncompleteSeries[] = [];
  readonly #dropped: string[] = [];
  #repairs: readonly DatasetRepair[] = [];
  readonly #files = new NewestFiles<string>();
  #sinks: CommittingSink[] = [];
  #kafka: KafkaKlineSink | undefined;
  /** The files sink: it claims the series it takes over and gives up those it hands on. */
  #dataset: DatasetSink | undefined;
  /** Departed workers' transactional ids already fenced. */
  readonly #fenced = new Set<string>();
  #halts: readonly Halt[] = [];
  #closedBars = 0;
  #formingUpdates = 0;
  #liveCycles = 0;
  /** Resolves once the sinks are open and the stream runs (add and remove wait for it). */
  readonly #started: Promise<void>;
  #markStarted!: () => void;

  constructor(
    private readonly o: KlineSyncOptions,
    private readonly signal: AbortSignal,
  ) {
    this.#clock = o.clock ?? o.client.clock;
    this.#universe = [...o.codes];
    this.#started = new Promise((resolve) => (this.#markStarted = resolve));
  }

  async run(): Promise<KlineSyncSummary> {
    let closed: PromiseSettledResult<void>[] = [];
    const known = new ServiceHalts({
      client: this.o.client,
      clock: this.#clock,
      signal: this.signal,
      universe: this.#universe,
      emitEvent: (e) => this.#event(e),
      on: this.o.serviceHalts,
    });
    try {
      this.#sinks = await this.#openSinks();
      await this.#readHalts();
      await this.#heal();
      await known.start(); // before the first bar is judged
      await this.#stream(known);
    } catch (err) {
      if (!isAbort(err, this.signal)) throw err;
    } finally {
      known.stop();
      this.#changes.complete();
      // What the sinks committed is what they hold: said for every series still short of N.
      this.#reportIncomplete();
      closed = await Promise.allSettled(this.#sinks.map((s) => s.close()));
    }
    // A sink that fails to close (the files' last commit gives up their claims) fails a run that
    // had not failed before.
    const failed = closed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return this.#summary();
  }

  async add(more: readonly string[]): Promise<void> {
    await this.#started;
    // What the previous holder of these series committed is in the sinks: read it first, so that
    // each series resumes where they end (a live answer before that would repeat a held bar).
    await this.#commits.checkpoint();
    const fence = this.#departedToFence(this.o.kafka?.delivery);
    if (fence.length > 0) await this.#kafka?.fence(fence);
    const fresh = [...new Set(more)].filter((code) => !this.#universe.includes(code));
    // Claimed in the table before it is read: the log refuses the previous writer's next commit.
    await this.#dataset?.claim(this.#seriesOf(fresh));
    await Promise.all(this.#sinks.map((s) => s.refresh()));
    this.#universe.push(...fresh);
    await this.#apply({ add: more });
  }

  async remove(less: readonly string[]): Promise<void> {
    await this.#started;
    this.#universe.splice(0, this.#universe.length, ...this.#universe.filter((code) => !less.includes(code)));
    await this.#apply({ remove: less });
    // What was delivered is made durable before the caller hands the series on, and the table
    // hears that this sync writes them no more.
    await this.#commits.checkpoint();
    await this.#dataset?.release(this.#seriesOf(less));
  }

  /** The series (`seriesKey`) of `codes` with the sync's kline types. */
  #seriesOf(codes: readonly string[]): string[] {
    return codes.flatMap((code) => this.o.klineTypes.map((k) => seriesKey(code, k)));
  }

  #apply(change: Omit<KlineUniverseChange, 'applied'>): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      this.#changes.next({ ...change, applied: (err) => (err === undefined ? resolve() : reject(err)) }),
    );
  }

  /** The updates into the sinks until the run ends (a backfill's end, a stop, a failure). */
  async #stream(known: ServiceHalts): Promise<void> {
    const updates$ = klineUpdates(this.o.client, {
      ...this.o,
      clock: this.#clock,
      resumeFrom: this.#sinks,
      changes: this.#changes,
      isHalted: (code, klineType, afterMs, beforeMs) =>
        known.explain(this.#halts, code, klineType, afterMs, beforeMs),
      onEvent: (e) => this.#event(e),
    }).pipe(
      takeUntil(fromAbortSignal(this.signal)),
      tap((u) => this.#onUpdate(u)),
    );
    const committed$: Observable<unknown> =
      this.#sinks.length === 0
        ? updates$
        : updates$.pipe(
            commitTo(this.#sinks, { clock: this.#clock, control: this.#commits }),
            tap((c) => this.#onCheckpoint(c)),
          );
    await new Promise<void>((resolve, reject) => {
      committed$.subscribe({ error: reject, complete: resolve });
      this.#markStarted();
    });
  }

  async #openSinks(): Promise<CommittingSink[]> {
    const { files, kafka, statePath } = this.o;
    const everyMs = this.o.checkpointMs ?? KLINE_SYNC_DEFAULTS.checkpointMs;
    const sinks: CommittingSink[] = [];
    try {
      if (files !== undefined) {
        this.#dataset = await this.#openDataset(files, everyMs);
        sinks.push(this.#dataset);
      }
      if (kafka !== undefined) {
        const fence = this.#departedToFence(kafka.delivery);
        this.#kafka = await KafkaKlineSink.open({
          ...kafka,
          ...(fence.length > 0 ? { fenceAtOpen: fence } : {}),
        });
        sinks.push(this.#kafka);
      }
      if (statePath !== undefined)
        sinks.push(
          await StateFileSink.open(statePath, { readable: files === undefined, checkpointEveryMs: everyMs }),
        );
    } catch (err) {
      // Those open already are released (the files' claims given up) before the failure goes on.
      await Promise.allSettled(sinks.map((s) => s.close()));
      throw err;
    }
    return sinks;
  }

  /** The files sink, its universe's series claimed in the table before anything is read. */
  #openDataset(files: NonNullable<KlineSyncOptions['files']>, everyMs: number): Promise<DatasetSink> {
    return DatasetSink.open({
      dir: files.dir,
      clock: this.#clock,
      checkpointEveryMs: everyMs,
      // A live sync's files are small; a backfill-only run checkpoints many rows at once.
      encoderThreads: files.encoderThreads ?? (this.o.live === false ? 1 : 0),
      ...(files.format === undefined ? {} : { format: files.format }),
      ...(files.maxFileAgeMs === undefined ? {} : { maxFileAgeMs: files.maxFileAgeMs }),
      ...(files.fence === undefined ? {} : { fence: files.fence }),
      ...(files.upkeep === undefined ? {} : { upkeep: files.upkeep }),
      ...(files.ifOwned === undefined ? {} : { ifOwned: files.ifOwned }),
      ...(files.leaseMs === undefined ? {} : { leaseMs: files.leaseMs }),
      ...(files.command === undefined ? {} : { command: files.command }),
      series: this.#seriesOf(this.#universe),
      signal: this.signal,
      onWaiting: (message) => this.#event({ type: 'warning', message }),
      onCompacted: (r) => this.#event({ type: 'compacted', ...r }),
      onUpkeep: (event) => {
        if (event.type !== 'compacted') this.#event({ type: 'upkeep', event });
      },
    });
  }

  /**
   * Committed files gone from the dataset are said (a warning naming them); then, with files gone
   * or in a backfill-only run, the dataset's unexplained gaps are filled with what the service
   * still serves (`healDataset`), and the files sink counts the rows its files really hold.
   */
  async #heal(): Promise<void> {
    const dir = this.o.files?.dir;
    const index = this.#sinks.findIndex((s) => s instanceof DatasetSink);
    // On object storage the table's files are the log's (nothing is lost behind its back) and
    // the heal's local reading does not apply.
    if (dir === undefined || index < 0 || isS3Url(dir)) return;
    const missing = await missingCommittedFiles(dir);
    if (missing.length > 0)
      this.#event({
        type: 'warning',
        message: `${missing.length} file(s) the dataset's commit log names are gone: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}; refetching what the service still serves`,
      });
    if (missing.length === 0 && this.o.live !== false) return;
    const sink = this.#sinks[index] as DatasetSink;
    const healed = await healDataset({
      client: this.o.client,
      dir,
      sink,
      codes: this.#universe,
      klineTypes: this.o.klineTypes,
      signal: this.signal,
    });
    this.#repairs = healed.repairs;
    // Said once: what they held is refetched where the service still serves it, or now a gap.
    if (missing.length > 0) await sink.forget(missing);
    if (healed.repairs.length > 0 || missing.length > 0)
      this.#event({ type: 'repaired', missingFiles: missing, repairs: healed.repairs });
    this.#sinks[index] = new HeldRowsSink(sink, healed.heldRows);
  }

  /** Departed workers' transactional ids not fenced yet (marked fenced). */
  #departedToFence(delivery: KafkaKlineSinkOptions['delivery']): string[] {
    if (delivery === 'at-least-once' || this.o.fenceDeparted === undefined) return [];
    const fresh = this.o.fenceDeparted().filter((id) => !this.#fenced.has(id));
    for (const id of fresh) this.#fenced.add(id);
    return fresh;
  }

  /** Halts in the dataset's own suspension records (`quoteflow suspensions --out` to the same DIR). */
  async #readHalts(): Promise<void> {
    if (this.o.files !== undefined && !isS3Url(this.o.files.dir))
      this.#halts = await readHalts(this.o.files.dir);
  }

  #onUpdate(u: BarUpdate | GapMarker | HistoryMarker): void {
    if (u.type !== 'bar-update') return;
    if (u.final) {
      this.#closedBars++;
      const key = seriesKey(u.code, u.klineType);
      this.#delivered.set(key, (this.#delivered.get(key) ?? 0) + 1);
    } else this.#formingUpdates++;
    try {
      this.o.onUpdate?.(u);
    } catch (err) {
      this.#event({ type: 'warning', message: 'onUpdate threw', error: err });
    }
  }

  #onCheckpoint(c: SinkCheckpoint): void {
    this.#files.add(c.files);
    this.#event({
      type: 'checkpoint',
      sink: c.sink,
      files: c.files,
      committed: c.closedBars,
      closedBars: this.#closedBars,
    });
    if (c.files.length > 0) void this.#readHalts().catch(() => undefined);
  }

  #event(e: KlineSyncEvent): void {
    if (e.type === 'live-cycle') this.#liveCycles++;
    if (e.type === 'code-dropped') {
      this.#dropped.push(e.code);
      this.#universe.splice(0, this.#universe.length, ...this.#universe.filter((c) => c !== e.code));
    }
    if (e.type === 'backfill-series-done') {
      if (e.truncated) this.#truncated.add(`${e.code}:${e.klineType}`);
      this.#backfilled.add(seriesKey(e.code, e.klineType));
    }
    try {
      this.o.onEvent?.(e);
    } catch {
      // A listener's failure must not stop the data.
    }
  }

  /** A `backfill-incomplete` event for each series of the run whose backfill did not finish. */
  #reportIncomplete(): void {
    const wanted = this.o.bars ?? KLINE_SYNC_DEFAULTS.bars;
    if (wanted === 0) return;
    const keeping = this.#sinks.some((s) => s.watermarks() !== undefined);
    for (const code of this.#universe)
      for (const klineType of this.o.klineTypes) {
        const key = seriesKey(code, klineType);
        if (this.#backfilled.has(key)) continue;
        const resume = resumePointOf(this.#sinks, code, klineType);
        const held = !keeping ? (this.#delivered.get(key) ?? 0) : resume.kind === 'all' ? resume.rows : 0;
        if (held >= wanted) continue;
        const incomplete = { code, klineType, held, wanted };
        this.#incomplete.push(incomplete);
        this.#event({ type: 'backfill-incomplete', ...incomplete });
      }
  }

  #summary(): KlineSyncSummary {
    return {
      series: this.#universe.length * this.o.klineTypes.length,
      closedBars: this.#closedBars,
      formingUpdates: this.#formingUpdates,
      files: this.#files.newest,
      fileCount: this.#files.count,
      truncatedSeries: [...this.#truncated],
      incompleteSeries: this.#incomplete,
      droppedCodes: [...this.#dropped],
      repairs: this.#repairs,
      liveCycles: this.#liveCycles,
    };
  }
}
