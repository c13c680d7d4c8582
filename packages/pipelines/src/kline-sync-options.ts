import type { BarUpdate, Clock, KlineType, QuoteflowClient } from '@quoteflow/core';
import { MERGE_BARS_DEFAULTS } from '@quoteflow/operators';
import type {
  CompactedPartition,
  DatasetFormat,
  IfOwned,
  KafkaKlineSinkOptions,
  TableUpkeepOptions,
  UpkeepEvent,
} from '@quoteflow/sinks';
import type { PipelineHandle } from './pipeline-handle.js';

/** Where closed bars go on disk. */
export interface KlineFilesOptions {
  /** Dataset directory (`DIR/kline/kline_type=K/…`). */
  readonly dir: string;
  /** @defaultValue `'parquet'` */
  readonly format?: DatasetFormat;
  /** A file is finished this long after its first row at the latest. @defaultValue 60,000 ms */
  readonly maxFileAgeMs?: number;
  /**
   * Worker threads that encode files (`DatasetWriter`'s `encoderThreads`). A live sync's files are
   * small (one row per series per bar period, finished at every checkpoint), so by default they are
   * encoded on the calling thread; a backfill-only run (`live: false`) checkpoints up to hundreds of
   * thousands of rows at once and uses one thread, so encoding never holds up its requests.
   * @defaultValue 0 with `live` (the default), 1 with `live: false`
   */
  readonly encoderThreads?: number;
  /**
   * Asked before each checkpoint is committed to the dataset's log, holding its publish lock: false
   * means this sync may no longer write its series (a cluster worker whose lease lapsed); the
   * checkpoint's files are dropped and the sync fails with `QF_FENCED`.
   */
  readonly fence?: () => boolean;
  /**
   * The table kept healthy while the sync writes it, in the background (`TableUpkeep` of
   * @quoteflow/sinks): small files merged tiered (the month being written too), a Delta
   * checkpoint of the newest version, log versions and removed files deleted after the retention;
   * `false` turns it off. @defaultValue on, with `TABLE_UPKEEP_DEFAULTS`
   */
  readonly upkeep?: false | TableUpkeepOptions;
  /**
   * The table arbitrates between its writers (`DatasetSink`): the sync claims its series when it
   * opens, before any request, and its universe's added series as they come. When another live
   * writer owns one: `'fail'` (the run rejects with `QF_OWNED`, naming the table, the series and
   * that writer), `'wait'` until it stops or its lease runs out (said once as a `warning` event),
   * or `'take-over'` (a cluster worker: its cluster's lease gave it the series; the log then
   * refuses the previous owner's next commit). @defaultValue `'fail'`, `'take-over'` with a `fence`
   */
  readonly ifOwned?: IfOwned;
  /** The sync's claims lapse this long without a renewal, for writers on other machines. @defaultValue 300,000 ms */
  readonly leaseMs?: number;
  /** What the sync is (`quoteflow sync`), shown to another writer that meets its claims. */
  readonly command?: string;
}

/**
 * How a K-line run reads: the universe, how much history, and the live poll. Shared by
 * {@link klineUpdates} (the source) and {@link klineSync} (the source into committing sinks).
 */
export interface KlineReadOptions {
  readonly codes: readonly string[];
  readonly klineTypes: readonly KlineType[];
  /** Closed bars of history per series where no sink holds it yet. @defaultValue 100 */
  readonly bars?: number;
  /** Keep the series current through `/batch-kline` after the backfill. @defaultValue true */
  readonly live?: boolean;
  /** How often every series is polled. @defaultValue the plan's refresh period (`estimatePlan`) */
  readonly refreshPeriodMs?: number;
  /**
   * Poll by the markets' calendars: each series right after its bar becomes final by the calendar,
   * while its market may trade at every poll (bars of a day or longer at most every 60 s), never while
   * it is closed; fewer series per poll, polled more often at the plan's pace. `false` polls every
   * series every `refreshPeriodMs`. @defaultValue true
   */
  readonly closeAwarePolling?: boolean;
  /**
   * A read this long after the calendar closed a bar's session proves its values final (see
   * `mergeBars`). @defaultValue 15,000 ms
   */
  readonly graceMs?: number;
  /**
   * A backfill-only run whose newest bar may have closed just before it was read (not proven final
   * yet) waits at most this long to read it again, so `bars` closed bars are the most recent ones
   * also across a bar boundary; a bar still forming when read is never waited for. @defaultValue 90,000 ms
   */
  readonly settleWaitMs?: number;
  /** Series backfilled at once (the scheduler paces the requests). @defaultValue 32 */
  readonly backfillConcurrency?: number;
  /** The clock of waits and timers. @defaultValue the client's clock */
  readonly clock?: Clock;
  /** Progress and status events (for progress bars, logs and metrics). */
  readonly onEvent?: (event: KlineSyncEvent) => void;
}

/** Options of {@link klineSync}. */
export interface KlineSyncOptions extends KlineReadOptions {
  /** The client (its plan decides the refresh period; its scheduler paces every request). */
  readonly client: QuoteflowClient;
  /** Closed bars go to these dataset files, exactly once per (code, kline type, start). */
  readonly files?: KlineFilesOptions;
  /**
   * Forming and closed bars go to `<prefix>.kline` (value `final: false|true`) through a
   * `KafkaKlineSink`: exactly once per final bar for `read_committed` consumers (the default; give
   * a `transactionalId` stable per sync and worker), or `delivery: 'at-least-once'`.
   */
  readonly kafka?: KafkaKlineSinkOptions;
  /**
   * The Kafka transactional ids of workers that held this sync's series before and are gone (a
   * cluster's `WorkLease.departed`, mapped to their sinks' ids): fenced when the Kafka sink opens
   * and before added series are read, so their open transactions end at once instead of after
   * their timeout, and a paused one can never commit later.
   */
  readonly fenceDeparted?: () => readonly string[];
  /**
   * State file: per series the first and last closed bar delivered, written at each checkpoint. Read
   * at start only without `files` (the dataset's commit log is the truth where there is one).
   */
  readonly statePath?: string;
  /**
   * Ask the service's suspension endpoints for halts of the universe's Shanghai and US stock codes
   * (at start, then in rounds while the market may trade: at most once a minute and 1% of the daily
   * budget, through the client's quota) and let them explain missing bars, with the halts in the
   * dataset's own suspension records. A failed query is a `warning` event and the halts known
   * before are kept. No request when no code is covered. Off by default: the token has one
   * suspension query a minute, and a sync that takes it keeps `quoteflow suspensions` (or a
   * suspension pipeline) of the same token waiting.
   * @defaultValue false
   */
  readonly serviceHalts?: boolean;
  /** Files committed and the state file written this often. @defaultValue 30,000 ms */
  readonly checkpointMs?: number;
  /** Stops the pipeline like `stop()`. */
  readonly signal?: AbortSignal;
  /** Every bar update (forming `final: false`, closed `final: true`), for embedding in an analytics job. */
  readonly onUpdate?: (update: BarUpdate) => void;
}

/** Defaults of {@link KlineSyncOptions}. */
export const KLINE_SYNC_DEFAULTS = {
  bars: 100,
  checkpointMs: 30_000,
  backfillConcurrency: 32,
  settleWaitMs: 90_000,
  graceMs: MERGE_BARS_DEFAULTS.graceMs,
} as const;

/** What a running sync reports. */
export type KlineSyncEvent =
  | { readonly type: 'backfill-start'; readonly series: number }
  | {
      readonly type: 'backfill-progress';
      readonly code: string;
      readonly klineType: KlineType;
      readonly bars: number;
      readonly wanted: number;
    }
  | {
      readonly type: 'backfill-series-done';
      readonly code: string;
      readonly klineType: KlineType;
      readonly bars: number;
      readonly truncated: boolean;
    }
  | { readonly type: 'backfill-done'; readonly series: number; readonly durationMs: number }
  | {
      readonly type: 'live-cycle';
      readonly groups: number;
      readonly durationMs: number;
      readonly newestBarMs: number | undefined;
    }
  | {
      readonly type: 'gap';
      readonly code: string;
      readonly klineType: KlineType;
      /** The newest bar held before the hole, or where a read of history was asked to start (epoch ms). */
      readonly fromMs: number | undefined;
      /** The first bar held after the hole (epoch ms), if known. */
      readonly toMs: number | undefined;
      /** The bars the calendar expects strictly between `fromMs` and `toMs`, when both are known. */
      readonly missing: MissingBars | undefined;
      readonly reason: string;
    }
  | {
      /**
       * Bars the calendar expects were missing when a newer bar of the series arrived (a restart's
       * first poll ahead of its history, polls that skip bars): the series' history is read again
       * from `fromMs`, and a `gap` follows only for what that read still lacks.
       */
      readonly type: 'bars-awaited';
      readonly code: string;
      readonly klineType: KlineType;
      /** The newest bar held before them (epoch ms). */
      readonly fromMs: number;
      /** The bar that arrived after them (epoch ms). */
      readonly toMs: number;
    }
  | {
      readonly type: 'checkpoint';
      /** The sink that committed (`files DIR`, `kafka P.kline`, `state FILE`). */
      readonly sink: string;
      /** Files this checkpoint committed (relative to the dataset directory). */
      readonly files: readonly string[];
      /** Closed bars this checkpoint committed to the sink. */
      readonly committed: number;
      /** Closed bars the sync delivered so far (to every sink, before each drops what it holds). */
      readonly closedBars: number;
    }
  | {
      /**
       * The run ended (a stop, `--duration`, a failure) before this series held its N bars: what its
       * sinks hold now (the fewest of them; what this run delivered without a sink that keeps
       * watermarks) and what was asked.
       */
      readonly type: 'backfill-incomplete';
      readonly code: string;
      readonly klineType: KlineType;
      readonly held: number;
      readonly wanted: number;
    }
  | {
      /**
       * A live run stopped syncing a code the service no longer serves (unknown, or out of the
       * plan): its series left the run, the others go on.
       */
      readonly type: 'code-dropped';
      readonly code: string;
      /** The service's refusal. */
      readonly reason: string;
    }
  | {
      /**
       * At the start, the dataset's unexplained gaps were filled with what the service still serves
       * (after committed files went missing, and on every backfill-only run): per series with gaps,
       * the bars repaired and those still lacking.
       */
      readonly type: 'repaired';
      /** Files the commit log names that were gone. */
      readonly missingFiles: readonly string[];
      readonly repairs: readonly DatasetRepair[];
    }
  | ({ readonly type: 'compacted' } & CompactedPartition)
  /** What the dataset's table upkeep reports (compactions also come as `compacted`). */
  | { readonly type: 'upkeep'; readonly event: UpkeepEvent }
  | { readonly type: 'warning'; readonly message: string; readonly error?: unknown };

/** The bars a gap leaves out, by the market calendar (an estimate under core's labelling of bar times). */
export interface MissingBars {
  /** Start of the first missing bar (epoch ms). */
  readonly firstMs: number;
  /** Start of the last missing bar (epoch ms). */
  readonly lastMs: number;
  readonly bars: number;
}

/** What a run repaired of one series' unexplained gaps, and the bars still lacking (not served any more). */
export interface DatasetRepair {
  readonly code: string;
  readonly klineType: KlineType;
  readonly repaired: number;
  readonly lacking: number;
}

/** A series whose backfill did not finish: what its sinks hold (`held`) of the `wanted` bars. */
export interface IncompleteSeries {
  readonly code: string;
  readonly klineType: KlineType;
  readonly held: number;
  readonly wanted: number;
}

/** Counts of a sync so far. */
export interface KlineSyncSummary {
  readonly series: number;
  /** Closed bars written to files (or emitted, without files). */
  readonly closedBars: number;
  /** Forming-bar updates emitted. */
  readonly formingUpdates: number;
  /** Dataset files committed by this run (relative to the dataset directory): the newest 1,000. */
  readonly files: readonly string[];
  /** Every dataset file committed by this run. */
  readonly fileCount: number;
  /** Series whose history is shorter than asked because the class cannot page back (stocks). */
  readonly truncatedSeries: readonly string[];
  /** Series whose backfill the run's end (a stop, `--duration`) cut short: what they hold of what was asked. */
  readonly incompleteSeries: readonly IncompleteSeries[];
  /** The dataset's gaps filled at the start, per series with gaps (`repaired` event). */
  readonly repairs: readonly DatasetRepair[];
  /** Codes a live run dropped because the service stopped serving them (`code-dropped` events). */
  readonly droppedCodes: readonly string[];
  readonly liveCycles: number;
}

/** A running {@link klineSync}: stop it, await it, or hand it more codes. */
export interface KlineSyncHandle extends PipelineHandle<KlineSyncSummary> {
  /**
   * Adds codes (with the sync's kline types) to the running sync without restarting it: their
   * dataset files are read first (another worker may have written them), then each new series is
   * backfilled from where the dataset ends (or N bars), then the live poll includes it. Codes
   * already synced are ignored. Rejects once the sync has stopped.
   */
  add(codes: readonly string[]): Promise<void>;
  /**
   * Stops syncing codes without stopping the rest: they leave the live poll, their bars not yet
   * final are dropped, and what was delivered is made durable (a checkpoint) before it resolves,
   * so another worker can resume them from the dataset. A removed code cannot be added back to
   * this run (restart it instead).
   */
  remove(codes: readonly string[]): Promise<void>;
}
