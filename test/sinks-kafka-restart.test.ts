/**
 * A broker restart in the middle of a stream: the broker is stopped while the sink keeps being
 * written to, then started again. Every record arrives exactly once and in order per key: the
 * sink waits (bounded) while the broker is away, the idempotent producer retries, and the broker
 * drops the retried batches it had already stored.
 */
import type { DepthTick } from '@quoteflow/core';
import { KafkaSink, KAFKA_DRIVERS } from '@quoteflow/sinks';
import { describe, expect, it } from 'vitest';
import {
  consumeWithKafkajs,
  consumeWithKcat,
  privateBroker,
  uniquePrefix,
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

describe.each(KAFKA_DRIVERS)('Kafka sink (%s) across a broker restart', (driver) => {
  it('loses nothing and duplicates nothing when the broker restarts mid-stream', async () => {
    const broker = await privateBroker();
    try {
      const prefix = uniquePrefix(`restart-${driver}`);
      const sink = new KafkaSink({
        brokers: broker.brokers,
        driver,
        topicPrefix: prefix,
        partitions: 3,
        replicationFactor: 1,
        maxBatchRecords: 100,
        maxInFlightRecords: MAX_IN_FLIGHT,
        retryMaxDelayMs: 500,
      });
      await sink.connect();

      // The writer: one record per key in turn, at most WINDOW writes unresolved; it stalls
      // whenever the sink is full, which is how the sink slows a pipeline.
      let written = 0;
      let stop = false;
      const failures: unknown[] = [];
      const writer = (async () => {
        const window: Promise<void>[] = [];
        while (!stop) {
          const code = CODES[written % CODES.length]!;
          window.push(
            sink
              .write(tick(code, Math.floor(written / CODES.length)))
              .catch((err: unknown) => void failures.push(err)),
          );
          written++;
          if (window.length >= WINDOW) {
            await window.shift();
          }
          if (written % 100 === 0) await sleep(2);
        }
        await Promise.all(window);
      })();

      await until(() => sink.stats().acknowledged >= 2_000, '2000 records are acknowledged');
      const writtenAtStop = written;
      await broker.stop();
      const ackedAtStop = sink.stats().acknowledged;
      await sleep(1_500); // the broker is away; writes pile up to the bound, then the writer waits
      expect(sink.stats().outstanding).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      const writtenWhileDown = written;
      // The writer got no further than the sink's bound plus its own window: it was slowed, not buffered for.
      expect(writtenWhileDown - ackedAtStop).toBeLessThanOrEqual(MAX_IN_FLIGHT + WINDOW);
      await broker.start();
      await until(
        () => sink.stats().acknowledged >= writtenWhileDown + 2_000,
        'the stream goes on after the restart',
      );
      stop = true;
      await writer;
      await sink.close();
      expect(failures).toEqual([]);

      const total = written;
      expect(writtenWhileDown).toBeGreaterThan(writtenAtStop); // the stream went on while the broker was down
      expect(ackedAtStop).toBeLessThan(total);
      expect(sink.stats()).toMatchObject({ written: total, acknowledged: total, undelivered: 0 });
      expect(sink.stats().maxOutstanding).toBeLessThanOrEqual(MAX_IN_FLIGHT);

      const topic = `${prefix}.depth`;
      const viaKcat = await consumeWithKcat(broker.brokers, topic);
      const viaKafkajs = (await consumeWithKafkajs(broker.brokers, [topic], total)).get(topic)!;
      for (const read of [viaKcat, viaKafkajs]) {
        expect(read).toHaveLength(total);
        const seqs = seqsByKey(read);
        expect([...seqs.keys()].sort()).toEqual([...CODES].sort());
        for (const [i, code] of CODES.entries()) {
          const count = Math.floor(total / CODES.length) + (i < total % CODES.length ? 1 : 0);
          // Exactly 0, 1, 2, … count-1: nothing lost, nothing twice, in order.
          expect(seqs.get(code)).toEqual(Array.from({ length: count }, (_, s) => s));
        }
      }
    } finally {
      await broker.dispose();
    }
  });
});
