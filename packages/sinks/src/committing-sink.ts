import type { BarUpdate, HistoryMarker } from '@quoteflow/core';
import type { SeriesWatermark } from './files/dataset-log-format.js';

/**
 * What one checkpoint of a {@link CommittingSink} made durable.
 */
export interface SinkCheckpoint {
  /** The sink's {@link CommittingSink.name}. */
  readonly sink: string;
  /** Final bars this checkpoint committed. */
  readonly closedBars: number;
  /** Per series (core's `seriesKey`), what this checkpoint added: its oldest and newest bar, its rows. */
  readonly series: ReadonlyMap<string, SeriesWatermark>;
  /** Paths (relative to the dataset root) of the files this checkpoint committed; empty for Kafka. */
  readonly files: readonly string[];
}

/**
 * A K-line sink that commits in checkpoints and knows, per series, how far its commits reach: the
 * piece that makes "closed bars exactly once" hold in any composition, not only in `klineSync`.
 *
 * - `write` takes every bar update without waiting. A final bar that the sink's watermark of its
 *   series already covers (`first <= tsMs <= last`), or that it took since its last checkpoint, is
 *   dropped, so a pipeline that replays history after a restart (from the oldest watermark of all
 *   its sinks) never makes a sink repeat a bar. Forming bars (`final: false`) go where the sink
 *   sends them (Kafka) or nowhere (files); they are not exactly-once.
 * - `checkpoint` commits everything taken since the last one together with the series' new
 *   watermarks: all of it or nothing, also across kill -9 at any moment. Sinks never depend on each
 *   other's commit: each resumes from its own watermarks.
 * - A failure (disk full, broker gone, fenced) is raised by the next `write` or `checkpoint`; what
 *   was committed stays committed.
 * - `mark` (optional) takes the history markers that bracket each series' backfill: a sink that
 *   keeps each series in time order holds its updates from `begin` to the end, then takes them
 *   oldest first. What it holds is not taken: no checkpoint commits it, its watermarks do not
 *   cover it, so after a crash the pipeline reads it again.
 */
export interface CommittingSink {
  /** What the sink is, for logs and errors: `files /data/md`, `kafka md.kline (exactly-once)`. */
  readonly name: string;
  /** How often a pipeline should checkpoint this sink, ms of the pipeline's clock. */
  readonly checkpointEveryMs: number;
  /**
   * Per series (core's `seriesKey`), what the sink's commits hold: those read when it opened (or at
   * the last {@link CommittingSink.refresh}) and those it made since. `undefined` when the sink keeps
   * none (Kafka at least once): it then takes every final bar a pipeline delivers, and a replay
   * after a crash may repeat bars there.
   */
  watermarks(): ReadonlyMap<string, SeriesWatermark> | undefined;
  /** Takes one update (see the interface); throws the sink's failure, if it failed earlier. */
  write(update: BarUpdate): void;
  /**
   * Takes a series' history marker (see the interface), if the sink cares about order within a
   * series; `commitTo` hands it every marker, and `cut-short` for each series still open when the
   * stream ends. Throws the sink's failure, if it failed earlier.
   */
  mark?(marker: HistoryMarker): void;
  /** Commits what was taken since the last checkpoint, with its watermarks; resolves once durable. */
  checkpoint(): Promise<SinkCheckpoint>;
  /**
   * Reads what other writers committed since the sink opened (another worker's series, before this
   * one takes them over), so its watermarks cover them. Checkpoint first.
   */
  refresh(): Promise<void>;
  /**
   * Releases the sink. What was taken since the last checkpoint is not committed (a Kafka
   * transaction is aborted, staged files are dropped): checkpoint first to keep it. Idempotent.
   */
  close(): Promise<void>;
}
