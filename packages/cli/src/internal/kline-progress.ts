import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import type { Clock } from '@quoteflow/core';
import { formatDuration, type KlineSyncEvent } from '@quoteflow/pipelines';
import { gapWarningFields } from './gap-warning.js';
import type { StderrChannel } from './stderr-channel.js';
import { UpkeepLog } from './upkeep-log.js';

/** Most per-series bars drawn at once (the rest show in the overall bar). */
const MAX_SERIES_BARS = 6;

/**
 * Shows a K-line sync to people: on a terminal, bars per series and overall with an ETA from the
 * plan's `/kline` rate, then one compact live status line; without one, structured log lines on
 * stderr (never stdout). The newest bar's age is measured on the pipeline's clock (the demo's runs
 * 30x: the wall clock would put its bars in the future).
 */
export class KlineProgress {
  readonly #multi: cliProgress.MultiBar | undefined;
  #overall: cliProgress.SingleBar | undefined;
  readonly #seriesBars = new Map<string, cliProgress.SingleBar>();
  #status: cliProgress.SingleBar | undefined;
  /** Series whose backfill finished (`CODE:K`), among those this process holds. */
  readonly #backfilled = new Set<string>();
  /** A cluster worker's id and the series it holds now; none: this process holds every series. */
  #cluster: { readonly worker: string; held: Set<string> } | undefined;
  #pagesDone = 0;
  #closedBars = 0;
  #files = 0;
  #cycles = 0;
  #newestBarAge = '-';
  #cycle = '';
  #backfillDone = false;
  readonly #upkeep: UpkeepLog;

  constructor(
    private readonly stderr: StderrChannel,
    private readonly logger: Logger,
    /** The sync's universe: every series is its codes × kline types. */
    private readonly universe: { readonly codes: readonly string[]; readonly klineTypes: readonly number[] },
    /** `/kline` requests the backfill needs and the plan's sustained rate of them (per second). */
    private readonly plan: { readonly requests: number; readonly ratePerSecond: number },
    /** The client's and the pipeline's clock, on which bars are labelled and read. */
    private readonly clock: Clock,
    /** Whether to draw bars (a terminal with pretty logs, not `-q`): else log lines only. */
    bars: boolean,
  ) {
    this.#upkeep = new UpkeepLog(logger);
    if (bars) {
      this.#multi = new cliProgress.MultiBar(
        {
          stream: stderr.stream as NodeJS.WriteStream,
          format: '{name} [{bar}] {value}/{total} {unit} {eta_plan}',
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          barsize: 24,
          etaBuffer: 50,
        },
        cliProgress.Presets.shades_classic,
      );
      stderr.intercept({ log: (text) => this.#multi?.log(text.endsWith('\n') ? text : `${text}\n`) });
    }
  }

  #eta(): string {
    const remaining = Math.max(0, this.plan.requests - this.#pagesDone);
    return remaining === 0 || !Number.isFinite(this.plan.ratePerSecond)
      ? ''
      : `ETA ${formatDuration((remaining / this.plan.ratePerSecond) * 1000)}`;
  }

  /** A page of a series read: its own bar (up to `MAX_SERIES_BARS` of them) and the overall one move. */
  #onBackfillProgress(e: Extract<KlineSyncEvent, { type: 'backfill-progress' }>): void {
    const key = `${e.code}:${e.klineType}`;
    let bar = this.#seriesBars.get(key);
    if (bar === undefined && this.#multi !== undefined && this.#seriesBars.size < MAX_SERIES_BARS) {
      bar = this.#multi.create(e.wanted > 1e6 ? e.bars : e.wanted, 0, {
        name: key.slice(0, 16).padEnd(16),
        unit: 'bars',
        eta_plan: '',
      });
      this.#seriesBars.set(key, bar);
    }
    bar?.update(Math.min(e.bars, bar.getTotal()));
    this.#updateOverall();
    this.logger.debug({ code: e.code, klineType: e.klineType, bars: e.bars }, 'backfill page');
  }

  /** A series backfilled: its bar leaves the display. */
  #onSeriesBackfilled(e: Extract<KlineSyncEvent, { type: 'backfill-series-done' }>): void {
    const key = `${e.code}:${e.klineType}`;
    this.#backfilled.add(key);
    const bar = this.#seriesBars.get(key);
    if (bar !== undefined) {
      this.#multi?.remove(bar);
      this.#seriesBars.delete(key);
    }
    this.#updateOverall();
    // A short series was reported by its gap event and is listed again at the end.
    this.logger.debug(
      { code: e.code, klineType: e.klineType, bars: e.bars, truncated: e.truncated },
      'series backfilled',
    );
  }

  handle(e: KlineSyncEvent): void {
    switch (e.type) {
      case 'backfill-start':
        // Pages, not series: a series of many pages would hold the bar at 0 until it ends.
        this.#overall = this.#multi?.create(Math.max(1, this.plan.requests), 0, {
          name: 'overall'.padEnd(16),
          unit: this.#overallUnit(),
          eta_plan: this.#eta(),
        });
        this.logger.info({ series: e.series, requests: this.plan.requests }, 'backfill started');
        break;
      case 'backfill-progress':
        this.#onBackfillProgress(e);
        break;
      case 'backfill-series-done':
        this.#onSeriesBackfilled(e);
        break;
      case 'backfill-done':
        this.#backfillDone = true;
        // Series the run had nothing to read for are backfilled too.
        for (const key of this.#held()) this.#backfilled.add(key);
        this.#overall?.setTotal(Math.max(1, this.#pagesDone));
        this.#overall?.update(Math.max(1, this.#pagesDone), { unit: this.#overallUnit(), eta_plan: 'done' });
        this.logger.info({ series: e.series, durationMs: e.durationMs }, 'backfill done');
        break;
      case 'live-cycle': {
        this.#cycles++;
        const lag =
          e.newestBarMs === undefined ? '-' : formatDuration(Math.max(0, this.clock.now() - e.newestBarMs));
        this.#cycle = `groups ${e.groups}  cycle ${e.durationMs} ms`;
        this.#newestBarAge = lag;
        this.#drawStatus();
        break;
      }
      case 'checkpoint':
        this.#closedBars = Math.max(this.#closedBars, e.closedBars);
        this.#files += e.files.length;
        this.#drawStatus();
        for (const f of e.files) this.logger.debug({ file: f }, 'file committed');
        if (e.committed > 0)
          this.logger.info(
            { sink: e.sink, files: e.files.length, committed: e.committed, closedBars: e.closedBars },
            'checkpoint',
          );
        break;
      case 'compacted':
        this.logger.info(
          { partition: e.partition, filesBefore: e.filesBefore, filesAfter: e.filesAfter, rows: e.rows },
          'partition compacted',
        );
        break;
      case 'gap':
        this.logger.warn(gapWarningFields(e), e.reason);
        break;
      case 'bars-awaited':
        // A warning only if the re-read still lacks them (then a `gap`).
        this.logger.debug(
          {
            code: e.code,
            klineType: e.klineType,
            after: new Date(e.fromMs).toISOString(),
            before: new Date(e.toMs).toISOString(),
          },
          'bars awaited: reading history again',
        );
        break;
      case 'upkeep':
        this.#upkeep.event(e.event);
        break;
      case 'warning':
        this.logger.warn({ err: e.error instanceof Error ? e.error.message : e.error }, e.message);
        break;
    }
  }

  /**
   * A cluster worker's share: it holds the series of `codes` from now on (none before its first
   * assignment). Series it gave up are no longer counted, backfilled or not: whoever holds them
   * says so, and taken back they are backfilled again.
   */
  hold(worker: string, codes: readonly string[]): void {
    const held = new Set(codes.flatMap((code) => this.universe.klineTypes.map((k) => `${code}:${k}`)));
    for (const key of this.#backfilled) if (!held.has(key)) this.#backfilled.delete(key);
    this.#cluster = { worker, held };
    this.#updateOverall();
  }

  /** The series this process holds: a cluster worker's share, or the whole universe. */
  #held(): Iterable<string> {
    return (
      this.#cluster?.held ??
      this.universe.codes.flatMap((code) => this.universe.klineTypes.map((k) => `${code}:${k}`))
    );
  }

  /** `done/total` series backfilled among those held. */
  #seriesCount(): string {
    const total = this.#cluster?.held.size ?? this.universe.codes.length * this.universe.klineTypes.length;
    return `${Math.min(this.#backfilled.size, total)}/${total}`;
  }

  /** A `/kline` page answered while the backfill runs (the overall bar moves page by page). */
  page(): void {
    if (this.#backfillDone) return;
    this.#pagesDone++;
    this.#updateOverall();
  }

  /** A closed bar the sync delivered: counted at once, not at the next checkpoint. */
  closedBar(): void {
    this.#closedBars++;
  }

  /** `N/M pages (S/T series)`: the overall bar's unit. */
  #overallUnit(): string {
    return `pages (${this.#seriesCount()} series)`;
  }

  #updateOverall(): void {
    if (this.#overall === undefined) return;
    if (this.#pagesDone > this.#overall.getTotal()) this.#overall.setTotal(this.#pagesDone);
    this.#overall.update(this.#pagesDone, { unit: this.#overallUnit(), eta_plan: this.#eta() });
  }

  /** The live status line on a terminal, redrawn at each cycle and each checkpoint. */
  #drawStatus(): void {
    if (this.#multi === undefined || this.#cycles === 0) return;
    this.#status ??= this.#multi.create(
      1,
      1,
      { name: 'live'.padEnd(16), unit: '', eta_plan: '' },
      { format: '{name} {status}' },
    );
    this.#status.update(1, {
      status: `cycles ${this.#cycles}  closed bars ${this.#closedBars}  files ${this.#files}  ${this.#cycle}`,
    });
  }

  /** Where the sync stands, for the periodic status line. */
  snapshot(): Record<string, unknown> {
    return {
      ...(this.#cluster === undefined
        ? {}
        : { worker: this.#cluster.worker, seriesHeld: this.#cluster.held.size }),
      seriesBackfilled: this.#seriesCount(),
      pages: this.#pagesDone,
      liveCycles: this.#cycles,
      closedBars: this.#closedBars,
      files: this.#files,
      newestBarAge: this.#newestBarAge,
    };
  }

  /** Removes the display (the terminal is the logger's again). */
  stop(): void {
    if (this.#multi !== undefined) {
      this.#multi.stop();
      this.stderr.intercept(undefined);
    }
  }
}
