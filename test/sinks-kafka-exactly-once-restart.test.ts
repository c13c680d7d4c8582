/**
 * A broker restart in the middle of an exactly-once run, with both drivers at once: writers go on
 * writing and checkpointing while the broker is stopped and started again. Each sink rides the
 * restart out within deliveryTimeoutMs without being opened again, and a read_committed consumer
 * (kcat) then sees every final bar exactly once, with its values. Whether a sink has to redo a
 * transaction depends on what the outage meets: kafkajs gives up on a transactional request whose
 * connection broke or whose coordinator it cannot find ("Failed to find group coordinator"; the
 * sink then redoes the transaction with a new producer), and retries one whose connection was
 * refused; @platformatic/kafka retries every request itself. sinks-kafka-transactions.test.ts
 * redoes transactions on purpose, with lost answers.
 */
import { seriesKey } from '@quoteflow/core';
import { KafkaKlineSink, KAFKA_DRIVERS, type KafkaDriverName } from '@quoteflow/sinks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BARS_T0, BAR_MS, barIndexOf, expectedKlineValue, klineBar } from './support/kafka-kline-bars.js';
import {
  consumeWithKcat,
  privateBroker,
  uniquePrefix,
  waitUntil,
  type PrivateBroker,
} from './support/kafka.js';

const CODES = ['AAPL.US', '700.HK', 'BTCUSDT', 'EURUSD'];
const CHUNK = 5;
const CHECKPOINT_EVERY_MS = 100;

/** A pipeline of one writer and one sink: rounds of CHUNK bars per series and a checkpoint, until stopped. */
class Writer {
  readonly prefix: string;
  rounds = 0;
  /** Since when a checkpoint has been waiting for the broker, if one is. */
  waitingSince: number | undefined;
  /** Per series, the next bar to write (all below it committed once the writer stopped). */
  readonly next = new Map<string, number>();
  /** Its sink's warnings: each transaction it redid (kafka.transaction-retry). */
  readonly warnings: string[] = [];
  /** Why its sink failed, if it did. */
  failure: unknown;
  #stop = false;
  #done: Promise<void> | undefined;

  constructor(
    readonly driver: KafkaDriverName,
    readonly brokers: string,
  ) {
    this.prefix = uniquePrefix(`eos-restart-${driver}`);
  }

  start(): void {
    this.#done = this.#run();
    this.#done.catch((err: unknown) => (this.failure = err));
  }

  /** Throws its sink's failure (a wait for a writer's progress ends with it at once). */
  alive(): true {
    if (this.failure !== undefined) throw this.failure;
    return true;
  }

  async stop(): Promise<Map<string, number>> {
    this.#stop = true;
    await this.#done;
    return this.next;
  }

  async #run(): Promise<void> {
    await using sink = await KafkaKlineSink.open({
      brokers: this.brokers,
      driver: this.driver,
      topicPrefix: this.prefix,
      transactionalId: `${this.prefix}-w1`,
      partitions: 2,
      replicationFactor: 1,
      checkpointEveryMs: CHECKPOINT_EVERY_MS,
      // The CLI's; the broker is back well within it.
      deliveryTimeoutMs: 30_000,
      retryMaxDelayMs: 500,
      logger: { warn: (event, fields) => void this.warnings.push(`${event} ${JSON.stringify(fields)}`) },
    });
    for (const code of CODES) {
      const last = sink.watermarks()?.get(seriesKey(code, 1))?.last;
      this.next.set(code, last === undefined ? 0 : barIndexOf(last) + 1);
    }
    while (!this.#stop) {
      for (const code of CODES) {
        const from = this.next.get(code)!;
        for (let i = from; i < from + CHUNK; i++) sink.write(klineBar(code, i));
        sink.write(klineBar(code, from + CHUNK, false));
      }
      this.waitingSince = Date.now();
      await sink.checkpoint();
      this.waitingSince = undefined;
      for (const code of CODES) this.next.set(code, this.next.get(code)! + CHUNK);
      this.rounds++;
      await new Promise((resolve) => setTimeout(resolve, sink.checkpointEveryMs));
    }
  }
}

let broker: PrivateBroker;
beforeAll(async () => {
  broker = await privateBroker();
});
afterAll(async () => {
  await broker?.dispose();
});

it('commits every final bar exactly once across a broker restart mid-run, each sink riding it out (both drivers)', async () => {
  const writers = KAFKA_DRIVERS.map((d) => new Writer(d, broker.brokers));
  for (const w of writers) w.start();
  await waitUntil(
    () => writers.every((w) => w.alive() && w.rounds >= 3),
    'each writer committed 3 checkpoints',
    30_000,
  );
  await broker.stop();
  await waitUntil(
    () => writers.every((w) => w.alive() && w.waitingSince !== undefined),
    'each writer waits for a checkpoint while the broker is down',
    10_000,
  );
  const roundsAtStop = writers.map((w) => w.rounds);
  await broker.start();
  await waitUntil(
    () => writers.every((w, i) => w.alive() && w.rounds >= roundsAtStop[i]! + 3),
    'each writer committed 3 more checkpoints after the restart',
    45_000,
  );
  // A sink that failed rejects here (QF_KAFKA_TRANSACTION past deliveryTimeoutMs): none may.
  const reached = await Promise.all(writers.map((w) => w.stop()));

  for (const [n, w] of writers.entries()) {
    const messages = await consumeWithKcat(broker.brokers, `${w.prefix}.kline`, 30_000, 'read_committed');
    const seen = new Map<string, number>();
    for (const m of messages) {
      const v = JSON.parse(m.value) as Record<string, unknown>;
      if (v['final'] !== true) continue;
      const i = (Date.parse(String(v['ts'])) - BARS_T0) / BAR_MS;
      expect(v, `${w.driver} ${m.key}@${i}`).toEqual(expectedKlineValue(m.key, i));
      seen.set(`${m.key}@${i}`, (seen.get(`${m.key}@${i}`) ?? 0) + 1);
    }
    const expected = CODES.flatMap((code) =>
      Array.from({ length: reached[n]!.get(code)! }, (_, i) => `${code}@${i}`),
    );
    expect([...seen.keys()].sort(), w.driver).toEqual([...expected].sort());
    expect(
      [...seen].filter(([, count]) => count !== 1),
      `${w.driver}, ${w.warnings.join(' | ')}`,
    ).toEqual([]);
  }
});
