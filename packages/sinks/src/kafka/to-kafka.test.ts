import type { DepthTick, GapMarker } from '@quoteflow/core';
import { BufferOverflowError } from '@quoteflow/core/internal';
import { EMPTY, NEVER, Subject, concat, from, lastValueFrom, throwError, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { FakeDriver, ackAll, settle } from '../../test-support/fake-driver.js';
import { KafkaDeliveryError } from './kafka-delivery-error.js';
import { KafkaSink } from './kafka-sink.js';
import { toKafka } from './to-kafka.js';

const tick = (code: string, seq: number): DepthTick => ({
  type: 'depth',
  code,
  seq: BigInt(seq),
  tickTimeMs: seq,
  bids: [],
  asks: [],
});
const gap: GapMarker = {
  type: 'gap',
  code: 'A',
  klineType: undefined,
  fromMs: 1,
  toMs: 2,
  reason: 'restart',
};

function makeSink(maxInFlightRecords = 100): { sink: KafkaSink; driver: FakeDriver } {
  const driver = new FakeDriver();
  const sink = new KafkaSink({
    brokers: '127.0.0.1:9092',
    driver: () => driver,
    lingerMs: 1_000,
    maxBatchRecords: 2,
    maxInFlightRecords,
  });
  return { sink, driver };
}

describe('toKafka', () => {
  it('emits each record only after its acknowledgement, in source order', async () => {
    const { sink, driver } = makeSink();
    const source = new Subject<DepthTick>();
    const seen: DepthTick[] = [];
    source.pipe(toKafka(sink)).subscribe((t) => seen.push(t));
    const input = [tick('A', 1), tick('B', 2), tick('A', 3)];
    for (const t of input) source.next(t);
    await settle();
    expect(seen).toEqual([]);
    driver.open[0]!.ack(); // first batch: A1, B2
    await settle();
    expect(seen).toEqual(input.slice(0, 2));
    await ackAll(driver);
    expect(seen).toEqual(input);
  });

  it('passes gap markers through in their place without producing them', async () => {
    const { sink, driver } = makeSink();
    driver.autoAck = true;
    const out = await lastValueFrom(from([tick('A', 1), gap, tick('A', 2)]).pipe(toKafka(sink), toArray()));
    expect(out).toEqual([tick('A', 1), gap, tick('A', 2)]);
    expect(driver.sent()).toHaveLength(2);
  });

  it('completes after the last acknowledgement, flushing without waiting for the linger', async () => {
    const { sink, driver } = makeSink();
    driver.autoAck = true;
    const out = await lastValueFrom(from([tick('A', 1)]).pipe(toKafka(sink), toArray()));
    expect(out).toEqual([tick('A', 1)]);
  });

  it('completes at once on an empty source and never on a silent one', async () => {
    const { sink } = makeSink();
    expect(await lastValueFrom(EMPTY.pipe(toKafka(sink), toArray()))).toEqual([]);
    let done = false;
    const sub = NEVER.pipe(toKafka(sink)).subscribe({ complete: () => (done = true) });
    await settle();
    expect(done).toBe(false);
    sub.unsubscribe();
  });

  it('forwards a source error after the records before it were acknowledged', async () => {
    const { sink, driver } = makeSink();
    driver.autoAck = true;
    const err = await lastValueFrom(
      concat(
        from([tick('A', 1)]),
        throwError(() => new Error('source broke')),
      ).pipe(toKafka(sink)),
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('source broke');
    expect(driver.sent()).toHaveLength(1);
  });

  it('errors with the delivery error when the sink could not deliver', async () => {
    const { sink, driver } = makeSink();
    const result = lastValueFrom(from([tick('A', 1), tick('A', 2)]).pipe(toKafka(sink))).catch(
      (e: unknown) => e,
    );
    await settle();
    driver.open[0]!.fail(new Error('gone'));
    const err = await result;
    expect(err).toBeInstanceOf(KafkaDeliveryError);
    expect((err as KafkaDeliveryError).undelivered).toHaveLength(2);
  });

  it('errors with QF_BUFFER_OVERFLOW rather than holding more than maxBuffered records', async () => {
    const { sink } = makeSink(2);
    const err = await lastValueFrom(
      from([1, 2, 3, 4].map((i) => tick('A', i))).pipe(toKafka(sink, { maxBuffered: 3 })),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BufferOverflowError);
    expect((err as BufferOverflowError).code).toBe('QF_BUFFER_OVERFLOW');
  });

  it('stops emitting when unsubscribed (the sink still delivers what it took)', async () => {
    const { sink, driver } = makeSink();
    const seen: DepthTick[] = [];
    const sub = from([tick('A', 1)])
      .pipe(toKafka(sink))
      .subscribe((t) => seen.push(t));
    await settle();
    sub.unsubscribe();
    await ackAll(driver);
    expect(seen).toEqual([]);
    expect(sink.stats().acknowledged).toBe(1);
  });

  it('is cold: each subscription writes its own records', async () => {
    const { sink, driver } = makeSink();
    driver.autoAck = true;
    const piped = from([tick('A', 1)]).pipe(toKafka(sink));
    await lastValueFrom(piped);
    await lastValueFrom(piped);
    expect(driver.sent()).toHaveLength(2);
  });
});
