/**
 * A broker restart in the middle of an exactly-once run, with both drivers at once: writers go on
 * writing and checkpointing while the broker is stopped and started again. The sink rides the
 * restart out (the open transaction survives it on the broker), or, failing, is opened again by
 * its writer like a supervisor would and resumes from its watermarks; either way a read_committed
 * consumer (kcat) sees every final bar once, with its values.
 */
import { seriesKey } from '@quoteflow/core';
import {
  KafkaKlineSink,
  KAFKA_DRIVERS,
  type KafkaDriverName,
  type KafkaKlineSinkError,
} from '@quoteflow/sinks';
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

/** A pipeline of one writer: rounds of CHUNK bars per series and a checkpoint, until stopped. */
class Writer {
  readonly prefix: string;
  rounds = 0;
  /** The sinks it opened again after a failure (0 when the sink rode the restart out). */
  readonly reopened: string[] = [];
  /** Since when a checkpoint has been waiting for the broker, if one is. */
  waitingSince: number | undefined;
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
  }

  async stop(): Promise<Map<string, number>> {
    this.#stop = true;
    await this.#done;
    return this.next;
  }

  /** Per series, the next bar to write (all below it committed once the writer stopped). */
  next = new Map<string, number>();

  async #run(): Promise<void> {
    while (!this.#stop) {
      const sink = await KafkaKlineSink.open({
        brokers: this.brokers,
        driver: this.driver,
        topicPrefix: this.prefix,
        transactionalId: `${this.prefix}-w1`,
        partitions: 2,
        replicationFactor: 1,
        checkpointEveryMs: CHECKPOINT_EVERY_MS,
        deliveryTimeoutMs: 90_000,
        retryMaxDelayMs: 500,
      });
      this.next = new Map(
        CODES.map((code) => {
          const last = sink.watermarks()?.get(seriesKey(code, 1))?.last;
          return [code, last === undefined ? 0 : barIndexOf(last) + 1];
        }),
      );
      try {
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
      } catch (err) {
        this.waitingSince = undefined;
        this.reopened.push(`${(err as KafkaKlineSinkError).code}: ${(err as Error).message}`);
      } finally {
        await sink.close();
      }
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

it('commits every final bar exactly once across a broker restart mid-run (both drivers at once)', async () => {
  const writers = KAFKA_DRIVERS.map((d) => new Writer(d, broker.brokers));
  for (const w of writers) w.start();
  await waitUntil(() => writers.every((w) => w.rounds >= 3), 'each writer committed 3 checkpoints');
  await broker.stop();
  await waitUntil(
    () => writers.every((w) => w.waitingSince !== undefined),
    'each writer waits for a checkpoint while the broker is down',
  );
  const roundsAtStop = writers.map((w) => w.rounds);
  await broker.start();
  await waitUntil(
    () => writers.every((w, i) => w.rounds >= roundsAtStop[i]! + 3),
    'each writer committed 3 more checkpoints after the restart',
  );
  const reached = await Promise.all(writers.map((w) => w.stop()));

  for (const [n, w] of writers.entries()) {
    const messages = await consumeWithKcat(broker.brokers, `${w.prefix}.kline`, 60_000, 'read_committed');
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
      `${w.driver}, reopened: ${w.reopened.join(' | ')}`,
    ).toEqual([]);
  }
  // @platformatic/kafka retries every transactional request until deliveryTimeoutMs and rides the
  // restart out. kafkajs gives up at once when it cannot find the transaction coordinator (its
  // AddPartitionsToTxn or EndTxn meets the outage): the sink fails with QF_KAFKA_TRANSACTION,
  // retryable, and reopening it resumes from the committed watermarks (checked above).
  const [kafkajsWriter, platformaticWriter] = writers;
  expect(platformaticWriter!.reopened).toEqual([]);
  for (const r of kafkajsWriter!.reopened) expect(r).toMatch(/^QF_KAFKA_TRANSACTION: /);
});
