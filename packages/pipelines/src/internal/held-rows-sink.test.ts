import { describe, expect, it } from 'vitest';
import type { BarUpdate } from '@quoteflow/core';
import type { CommittingSink, SeriesWatermark, SinkCheckpoint } from '@quoteflow/sinks';
import { HeldRowsSink } from './held-rows-sink.js';
import { resumePointOf } from './resume-points.js';

/** A sink whose log counts 500 rows of AAPL.US:1 (a lost file's included) and takes what it is given. */
class LoggedSink implements CommittingSink {
  readonly name = 'files test';
  readonly checkpointEveryMs = 30_000;
  readonly marks = new Map<string, SeriesWatermark>([
    ['AAPL.US|1', { first: 0, last: 499 * 60_000, rows: 500 }],
  ]);
  readonly taken: BarUpdate[] = [];
  watermarks(): ReadonlyMap<string, SeriesWatermark> {
    return this.marks;
  }
  write(update: BarUpdate): void {
    this.taken.push(update);
  }
  checkpoint(): Promise<SinkCheckpoint> {
    const w = this.marks.get('AAPL.US|1')!;
    this.marks.set('AAPL.US|1', { ...w, rows: w.rows + this.taken.length });
    return Promise.resolve({ sink: this.name, closedBars: this.taken.length, series: new Map(), files: [] });
  }
  refresh(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('HeldRowsSink', () => {
  it('gives a run the rows the files hold, not the rows a lost file took with it (346, not 500)', async () => {
    const inner = new LoggedSink();
    const sink = new HeldRowsSink(inner, new Map([['AAPL.US|1', 346]]));
    expect(resumePointOf([sink], 'AAPL.US', 1)).toMatchObject({ kind: 'all', rows: 346 });
    sink.write({ code: 'AAPL.US', klineType: 1, tsMs: 500 * 60_000 } as BarUpdate);
    await sink.checkpoint();
    expect(inner.taken).toHaveLength(1);
    expect(resumePointOf([sink], 'AAPL.US', 1)).toMatchObject({ kind: 'all', rows: 347 });
    expect(resumePointOf([inner], 'AAPL.US', 1)).toMatchObject({ rows: 501 });
  });
});
