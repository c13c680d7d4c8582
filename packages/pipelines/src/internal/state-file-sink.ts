import { type BarUpdate, seriesKey } from '@quoteflow/core';
import {
  SeriesIntake,
  type CommittingSink,
  type SeriesWatermark,
  type SinkCheckpoint,
} from '@quoteflow/sinks';
import { SyncState } from '../sync-state.js';

/**
 * The sync's state file as a committing sink: per series the first and last closed bar delivered
 * and the rows, written whole (atomically) at each checkpoint. Without a dataset it is what a
 * restart resumes from; beside one it is written for those who read it and has no say
 * (`watermarks()` is `undefined`: the dataset's log is the truth).
 */
export class StateFileSink implements CommittingSink {
  readonly name: string;
  readonly #intake: SeriesIntake;

  private constructor(
    private readonly path: string,
    private readonly state: SyncState,
    private readonly readable: boolean,
    readonly checkpointEveryMs: number,
  ) {
    this.name = `state ${path}`;
    this.#intake = new SeriesIntake(watermarksOf(state));
  }

  static async open(
    path: string,
    options: { readable: boolean; checkpointEveryMs: number },
  ): Promise<StateFileSink> {
    return new StateFileSink(path, await SyncState.load(path), options.readable, options.checkpointEveryMs);
  }

  watermarks(): ReadonlyMap<string, SeriesWatermark> | undefined {
    return this.readable ? this.#intake.committed : undefined;
  }

  write(u: BarUpdate): void {
    if (u.final) this.#intake.take(u);
  }

  async checkpoint(): Promise<SinkCheckpoint> {
    const gained = this.#intake.drain();
    for (const [key, w] of gained) {
      const bar = key.lastIndexOf('|');
      this.state.record(key.slice(0, bar), Number(key.slice(bar + 1)) as BarUpdate['klineType'], {
        firstMs: w.first,
        lastMs: w.last,
        rows: w.rows,
      });
    }
    await this.state.save(this.path);
    this.#intake.commit();
    let closedBars = 0;
    for (const w of gained.values()) closedBars += w.rows;
    return { sink: this.name, closedBars, series: gained, files: [] };
  }

  async refresh(): Promise<void> {}

  async close(): Promise<void> {}
}

function watermarksOf(state: SyncState): Map<string, SeriesWatermark> {
  const out = new Map<string, SeriesWatermark>();
  for (const [key, e] of state.entries()) {
    const colon = key.lastIndexOf(':');
    out.set(seriesKey(key.slice(0, colon), Number(key.slice(colon + 1))), {
      first: e.firstMs,
      last: e.lastMs,
      rows: e.rows,
    });
  }
  return out;
}
