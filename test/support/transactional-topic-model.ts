/**
 * An in-memory model of a Kafka topic written with transactions, as a committing sink: what a
 * `read_committed` consumer would read is `committed`; a transaction still open when its process
 * "dies" is simply gone (the broker aborts it when the next producer with the same transactional id
 * starts). It follows Kafka's semantics, not quoteflow's Kafka sink, so a pipeline-level test can
 * check exactly-once over the committing-sink contract with an oracle of its own.
 */
import type { BarUpdate } from '@quoteflow/core';
import {
  SeriesIntake,
  type CommittingSink,
  type SeriesWatermark,
  type SinkCheckpoint,
} from '@quoteflow/sinks';

/** The topic: committed records (data and watermarks), as a consumer reading committed sees them. */
export class TransactionalTopicModel {
  readonly committed: BarUpdate[] = [];
  readonly watermarks = new Map<string, SeriesWatermark>();
}

/** One producer (process) of the model; {@link CrashableSink.crash} ends it as kill -9 would. */
export class ModelKafkaSink implements CommittingSink {
  readonly name = 'kafka (model)';
  readonly #intake: SeriesIntake;
  #open: BarUpdate[] = [];
  #crashed = false;

  constructor(
    private readonly topic: TransactionalTopicModel,
    readonly checkpointEveryMs: number,
  ) {
    this.#intake = new SeriesIntake(topic.watermarks);
  }

  watermarks(): ReadonlyMap<string, SeriesWatermark> {
    return this.#intake.committed;
  }

  write(u: BarUpdate): void {
    if (this.#crashed) throw new Error('crashed');
    if (!u.final || this.#intake.take(u)) this.#open.push(u);
  }

  async checkpoint(): Promise<SinkCheckpoint> {
    if (this.#crashed) throw new Error('crashed');
    const records = this.#open;
    this.#open = [];
    const gained = this.#intake.drain();
    await new Promise((r) => setImmediate(r)); // the commit's round trip
    if (this.#crashed) throw new Error('crashed'); // died before the commit reached the broker
    // The commit: data and watermarks become visible together.
    this.topic.committed.push(...records);
    for (const [key, w] of gained) {
      const held = this.topic.watermarks.get(key);
      this.topic.watermarks.set(
        key,
        held === undefined
          ? w
          : {
              first: Math.min(held.first, w.first),
              last: Math.max(held.last, w.last),
              rows: held.rows + w.rows,
            },
      );
    }
    this.#intake.commit();
    let closedBars = 0;
    for (const w of gained.values()) closedBars += w.rows;
    return { sink: this.name, closedBars, series: gained, files: [] };
  }

  async refresh(): Promise<void> {}

  async close(): Promise<void> {
    this.#open = []; // an open transaction is aborted
  }

  crash(): void {
    this.#crashed = true;
    this.#open = [];
  }
}

/**
 * A committing sink that dies at `crash()`: nothing it is asked afterwards happens (a checkpoint
 * already under way finishes or not, as a commit at the moment of a kill).
 */
export class CrashableSink implements CommittingSink {
  #crashed = false;
  constructor(private readonly inner: CommittingSink) {}
  get name(): string {
    return this.inner.name;
  }
  get checkpointEveryMs(): number {
    return this.inner.checkpointEveryMs;
  }
  watermarks(): ReadonlyMap<string, SeriesWatermark> | undefined {
    return this.inner.watermarks();
  }
  write(u: BarUpdate): void {
    if (this.#crashed) throw new Error('crashed');
    this.inner.write(u);
  }
  checkpoint(): Promise<SinkCheckpoint> {
    if (this.#crashed) return Promise.reject(new Error('crashed'));
    return this.inner.checkpoint();
  }
  refresh(): Promise<void> {
    return this.inner.refresh();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  crash(): void {
    this.#crashed = true;
  }
}
