/**
 * A broker restart in the middle of a stream: the broker is stopped while the sink keeps being
 * written to, then started again. Every record arrives exactly once and in order per key: the
 * sink waits (bounded) while the broker is away, the idempotent producer retries, and the broker
 * drops the retried batches it had already stored.
 */
import type { DepthTick } from '@quoteflow/core';
import { KafkaDeliveryError, KafkaSink, KAFKA_DRIVERS, type KafkaDriverName } from '@quoteflow/sinks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  consumeWithKafkajs,
  consumeWithKcat,
  privateBroker,
  uniquePrefix,
  type PrivateBroker,
  type ReadMessage,
} from './support/kafka.js';

const CODES = Array.from({ length: 20 }, (_, i) => `R${i}.US`);
const MAX_IN_FLIGHT = 400;
const WINDOW = 1_000;

const tick = (code: string, seq: number): DepthTick => ({
  type: 'depth',
  code,
  seq: BigInt(seq),
  tickTimeMs: Date.UTC(2026, 10, 21) + seq,
  bids: [{ price: 1 + seq / 1000, volume: seq, priceRaw: '', volumeRaw: '' }],
  asks: [],
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

/** Per key, the seq numbers in partition order. */
function seqsByKey(messages: readonly ReadMessage[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const m of messages) {
    const seq = Number((JSON.parse(m.value) as { seq: string }).seq);
    out.set(m.key, [...(out.get(m.key) ?? []), seq]);
  }
  return out;
}

/** A sink with a writer that writes one record per key in turn until stopped. */
class Stream {
  readonly prefix: string;
  readonly sink: KafkaSink;
  written = 0;
  readonly failures: unknown[] = [];
  #stop = false;
  #done: Promise<void> | undefined;

  constructor(
    readonly driver: KafkaDriverName,
    brokers: string,
  ) {
    this.prefix = uniquePrefix(`restart-${driver}`);
    this.sink = new KafkaSink({
      brokers,
      driver,
      topicPrefix: this.prefix,
      partitions: 3,
      replicationFactor: 1,
      maxBatchRecords: 100,
      maxInFlightRecords: MAX_IN_FLIGHT,
      retryMaxDelayMs: 500,
    });
  }

  /** At most WINDOW writes unresolved: the writer stalls whenever the sink is full, which is how the sink slows a pipeline. */
  start(): void {
    this.#done = (async () => {
      const window: Promise<void>[] = [];
      while (!this.#stop) {
        const code = CODES[this.written % CODES.length]!;
        window.push(
          this.sink
            .write(tick(code, Math.floor(this.written / CODES.length)))
            .catch((err: unknown) => void this.failures.push(err)),
        );
        this.written++;
        if (window.length >= WINDOW) await window.shift();
        if (this.written % 100 === 0) await sleep(2);
      }
      await Promise.all(window);
    })();
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await this.#done;
    await this.sink.close();
  }
}

let broker: PrivateBroker;
beforeAll(async () => {
  broker = await privateBroker();
});
afterAll(async () => {
  await broker?.dispose();
});

it('loses nothing and duplicates nothing when the broker restarts mid-stream (both drivers at once)', async () => {
  const streams = KAFKA_DRIVERS.map((d) => new Stream(d, broker.brokers));
  await Promise.all(streams.map((s) => s.sink.connect()));
  for (const s of streams) s.start();

  await until(
    () => streams.every((s) => s.sink.stats().acknowledged >= 2_000),
    '2000 records of each stream are acknowledged',
  );
  await broker.stop();
  const ackedAtStop = streams.map((s) => s.sink.stats().acknowledged);
  // The broker is away: writes pile up to the bound, then the writers wait (none wrote for 300 ms).
  let seen = streams.map((s) => s.written);
  let stillSince = Date.now();
  await until(() => {
    const now = streams.map((s) => s.written);
    if (now.some((n, i) => n !== seen[i])) [seen, stillSince] = [now, Date.now()];
    return Date.now() - stillSince >= 300;
  }, 'the writers wait while the broker is away');
  const writtenWhileDown = streams.map((s) => s.written);
  for (const [i, s] of streams.entries()) {
    expect(s.sink.stats().outstanding, s.driver).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    // The sink held what the broker could not take (the writer may have reached the sink's bound
    // before the broker went away, so it need not have written more since), but no more than its
    // bound plus the writer's own window: the stream was slowed, not buffered for.
    expect(writtenWhileDown[i]!, s.driver).toBeGreaterThan(ackedAtStop[i]!);
    expect(writtenWhileDown[i]! - ackedAtStop[i]!, s.driver).toBeLessThanOrEqual(MAX_IN_FLIGHT + WINDOW);
  }
  await broker.start();
  await until(
    () => streams.every((s, i) => s.sink.stats().acknowledged >= writtenWhileDown[i]! + 2_000),
    'both streams go on after the restart',
  );
  await Promise.all(streams.map((s) => s.stop()));

  const topics = streams.map((s) => `${s.prefix}.depth`);
  const viaKafkajs = await consumeWithKafkajs(
    broker.brokers,
    topics,
    streams.reduce((n, s) => n + s.written, 0),
  );
  for (const s of streams) {
    const total = s.written;
    expect(s.failures, s.driver).toEqual([]);
    expect(s.sink.stats(), s.driver).toMatchObject({ written: total, acknowledged: total, undelivered: 0 });
    expect(s.sink.stats().maxOutstanding, s.driver).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    const topic = `${s.prefix}.depth`;
    for (const read of [await consumeWithKcat(broker.brokers, topic), viaKafkajs.get(topic)!]) {
      expect(read, s.driver).toHaveLength(total);
      const seqs = seqsByKey(read);
      expect([...seqs.keys()].sort()).toEqual([...CODES].sort());
      for (const [i, code] of CODES.entries()) {
        const count = Math.floor(total / CODES.length) + (i < total % CODES.length ? 1 : 0);
        // Exactly 0, 1, 2, … count-1: nothing lost, nothing twice, in order.
        expect(seqs.get(code), `${s.driver} ${code}`).toEqual(Array.from({ length: count }, (_, n) => n));
      }
    }
  }
});

it('when the broker stays away, every write and close() reject with exactly the records not delivered', async () => {
  await broker.stop();
  for (const driver of KAFKA_DRIVERS) {
    const sink = new KafkaSink({
      brokers: broker.brokers,
      driver,
      topicPrefix: uniquePrefix(`down-${driver}`),
      deliveryTimeoutMs: 3_000,
      retryMaxDelayMs: 200,
      connectTimeoutMs: 500,
    });
    const input = CODES.slice(0, 5).map((code, i) => tick(code, i));
    const writes = input.map((r) =>
      sink.write(r).then(
        () => 'acknowledged',
        (err: unknown) => err,
      ),
    );
    const closed: unknown = await sink.close().catch((err: unknown) => err);
    expect(closed, driver).toBeInstanceOf(KafkaDeliveryError);
    expect((closed as KafkaDeliveryError).undelivered.map((m) => m.key)).toEqual(input.map((r) => r.code));
    // Why: the driver's own give-up reason, or the sink's delivery timeout, whichever came first.
    expect((closed as KafkaDeliveryError).message, driver).toMatch(
      /not acknowledged by the broker: (\w+ gave up: .+|no acknowledgement within deliveryTimeoutMs = 3000 ms)$/,
    );
    for (const w of await Promise.all(writes)) expect(w, driver).toBeInstanceOf(KafkaDeliveryError);
    expect(sink.stats(), driver).toMatchObject({ written: 5, acknowledged: 0, undelivered: 5 });
  }
});
