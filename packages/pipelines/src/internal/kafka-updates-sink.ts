import type { BarUpdate } from '@quoteflow/core';
import { KafkaSink, type CommittingSink, type KafkaSinkOptions, type SinkCheckpoint } from '@quoteflow/sinks';
import { PipelineError } from '../pipeline-error.js';

/**
 * Kafka at least once as a committing sink: every update produced through the idempotent producer,
 * a checkpoint waits for the acknowledgements. It keeps no watermarks: after a crash it repeats
 * what the pipeline replays (consumers dedupe on key + `kline_type` + `ts`).
 */
export class KafkaUpdatesSink implements CommittingSink {
  readonly name: string;
  readonly checkpointEveryMs = 1_000;
  readonly #sink: KafkaSink;
  #closedBars = 0;
  #failure: unknown;

  constructor(options: KafkaSinkOptions) {
    this.#sink = new KafkaSink(options);
    this.name = `kafka ${this.#sink.topicPrefix}.kline`;
  }

  watermarks(): undefined {
    return undefined;
  }

  write(u: BarUpdate): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (u.final) this.#closedBars++;
    this.#sink.write(u).catch((err: unknown) => {
      this.#failure ??= err;
    });
  }

  async checkpoint(): Promise<SinkCheckpoint> {
    const closedBars = this.#closedBars;
    this.#closedBars = 0;
    await this.#sink.flush().catch((err: unknown) => {
      this.#failure ??= err;
    });
    if (this.#failure !== undefined)
      throw new PipelineError('QF_PIPELINE', `${this.name}: Kafka delivery failed`, { cause: this.#failure });
    return { sink: this.name, closedBars, series: new Map(), files: [] };
  }

  async refresh(): Promise<void> {}

  async close(): Promise<void> {
    await this.#sink.close().catch(() => undefined);
  }
}
