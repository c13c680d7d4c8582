/** A scripted producer driver for unit tests: records calls; each batch's fate is up to the test. */
import type { KafkaProducerDriver, KafkaTopicSpec } from '../src/kafka/kafka-producer-driver.js';
import type { KafkaMessage } from '../src/kafka/to-kafka-message.js';

export interface SentBatch {
  readonly messages: readonly KafkaMessage[];
  ack(): void;
  fail(err: unknown): void;
}

export class FakeDriver implements KafkaProducerDriver {
  readonly name = 'fake';
  readonly batches: SentBatch[] = [];
  /** Batches neither acknowledged nor failed yet. */
  open: SentBatch[] = [];
  readonly ensured: KafkaTopicSpec[][] = [];
  connects = 0;
  closes = 0;
  /** Batches currently awaiting ack (the sink must keep this at most 1). */
  inFlight = 0;
  maxInFlight = 0;
  /** Ack every batch right away (in a microtask) instead of waiting for the test. */
  autoAck = false;
  connectError: unknown;

  async connect(): Promise<void> {
    this.connects++;
    if (this.connectError !== undefined) throw this.connectError;
  }

  async ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void> {
    this.ensured.push([...topics]);
  }

  send(messages: readonly KafkaMessage[]): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<void>((resolve, reject) => {
      const batch: SentBatch = {
        messages: [...messages],
        ack: () => {
          this.inFlight--;
          this.open = this.open.filter((b) => b !== batch);
          resolve();
        },
        fail: (err) => {
          this.inFlight--;
          this.open = this.open.filter((b) => b !== batch);
          reject(err);
        },
      };
      this.batches.push(batch);
      this.open.push(batch);
      if (this.autoAck) queueMicrotask(batch.ack);
    });
  }

  async close(): Promise<void> {
    this.closes++;
  }

  /** Every message sent so far, in order. */
  sent(): KafkaMessage[] {
    return this.batches.flatMap((b) => b.messages);
  }
}

/** Acknowledges batches as they come until none is left open. */
export async function ackAll(driver: FakeDriver): Promise<void> {
  await settle();
  while (driver.open.length > 0) {
    driver.open[0]!.ack();
    await settle();
  }
}

/** Lets pending promise callbacks run. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
