import { InvalidOptionError, type GapMarker } from '@quoteflow/core';
import { BufferOverflowError } from '@quoteflow/core/internal';
import { AckedInOrder } from './internal/acked-in-order.js';
import { Observable, type MonoTypeOperatorFunction, type Subscriber, type TeardownLogic } from 'rxjs';
import type { KafkaSink } from './kafka-sink.js';
import type { KafkaRecord } from './to-kafka-message.js';

/** Options of {@link toKafka}. */
export interface ToKafkaOptions {
  /**
   * Most records the operator holds while they wait for their acknowledgement (the sink's own
   * `maxInFlightRecords` included). Past it the stream errors with `QF_BUFFER_OVERFLOW` instead of
   * buffering without limit: RxJS cannot pause a push source, so a source that outruns the broker
   * this far is a fault to see, not to hide.
   */
  readonly maxBuffered?: number;
}

/** Defaults of {@link ToKafkaOptions}. */
export const TO_KAFKA_DEFAULTS = { maxBuffered: 100_000 } as const;

/**
 * Produces every record to Kafka through `sink` and emits it downstream only once the broker
 * acknowledged it, in the order it came. Gap markers are not produced; they travel downstream in
 * their place in the order.
 *
 * Completion: when the source completes, what is still batched is flushed and the operator
 * completes after the last acknowledgement. A source error is forwarded after the records before
 * it were acknowledged. A record the sink could not deliver errors the stream with the sink's
 * `KafkaDeliveryError` (which lists every undelivered record). Unsubscribing stops emitting; records
 * already handed to the sink are still delivered by it (close the sink to wait for them).
 * The operator does not close the sink: one sink may serve several streams.
 *
 * @param sink - the Kafka sink to write to
 * @param options - see {@link ToKafkaOptions}
 * @defaultValue maxBuffered `100_000` records
 * @example
 * ```ts
 * const sink = new KafkaSink({ brokers: '127.0.0.1:9092' });
 * ticks$.pipe(dedupeBySeq(), toKafka(sink)).subscribe({ complete: () => void sink.close() });
 * ```
 */
export function toKafka<T extends KafkaRecord | GapMarker>(
  sink: KafkaSink,
  options: ToKafkaOptions = {},
): MonoTypeOperatorFunction<T> {
  const maxBuffered = options.maxBuffered ?? TO_KAFKA_DEFAULTS.maxBuffered;
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 1) {
    throw new InvalidOptionError(
      'maxBuffered',
      `toKafka: "maxBuffered" must be an integer >= 1, got ${JSON.stringify(maxBuffered)}`,
    );
  }
  return (source) => new Observable<T>((subscriber) => produceInOrder(source, subscriber, sink, maxBuffered));
}

/**
 * One subscription of {@link toKafka}: writes each record, holds it until acknowledged and emits
 * in arrival order; ends after the last acknowledgement once the source has.
 */
function produceInOrder<T extends KafkaRecord | GapMarker>(
  source: Observable<T>,
  subscriber: Subscriber<T>,
  sink: KafkaSink,
  maxBuffered: number,
): TeardownLogic {
  const held = new AckedInOrder<T>();
  let sourceDone = false;
  let sourceError: { err: unknown } | undefined;
  let stopped = false;
  const isStopped = () => stopped;
  const emit = (value: T) => subscriber.next(value);

  const finishIfDone = (): void => {
    if (stopped || !sourceDone || held.size !== 0) return;
    stopped = true;
    if (sourceError !== undefined) subscriber.error(sourceError.err);
    else subscriber.complete();
  };

  const drain = (): void => {
    held.release(emit, isStopped);
    finishIfDone();
  };

  const fail = (err: unknown): void => {
    if (stopped) return;
    stopped = true;
    subscriber.error(err);
  };

  const sourceEnded = (): void => {
    sourceDone = true;
    // Skip the linger: nothing more is coming. Failures surface through the writes.
    sink.flush().catch(() => undefined);
    finishIfDone();
  };

  const subscription = source.subscribe({
    next: (value) => {
      if (stopped) return;
      if (held.size >= maxBuffered) return fail(new BufferOverflowError(maxBuffered));
      const entry = held.push(value, value.type === 'gap');
      if (entry.acked) return drain();
      sink.write(value as KafkaRecord).then(() => {
        entry.acked = true;
        drain();
      }, fail);
    },
    error: (err: unknown) => {
      sourceError = { err };
      sourceEnded();
    },
    complete: sourceEnded,
  });
  return () => {
    stopped = true;
    subscription.unsubscribe();
  };
}
