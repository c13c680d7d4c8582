/** Test helpers of KafkaKlineSink on the in-memory transactional Kafka (its unit tests). */
import type { BarUpdate } from '@quoteflow/core';
import { expect } from 'vitest';
import type { FakeKafkaCluster } from './fake-transactional-kafka.js';
import { type FakeDriverHooks } from './fake-transactional-kafka.js';
import { KafkaKlineSinkError } from '../src/kafka/kafka-kline-sink-error.js';
import type { KafkaKlineSinkOptions } from '../src/kafka/kafka-kline-sink-options.js';
import { KafkaKlineSink } from '../src/kafka/kafka-kline-sink.js';

export const T0 = Date.UTC(2026, 0, 5, 14, 30);
export const MINUTE = 60_000;

/** Bar `i` (minute bars from T0) of `code`, final unless said otherwise. */
export function bar(code: string, i: number, final = true): BarUpdate {
  return {
    type: 'bar-update',
    code,
    klineType: 1,
    tsMs: T0 + i * MINUTE,
    open: 100 + i,
    high: 101 + i,
    low: 99 + i,
    close: 100.5 + i,
    volume: 1000 + i,
    turnover: null,
    readAtMs: T0 + (i + 1) * MINUTE + 5_000,
    receivedAtMs: T0 + (i + 1) * MINUTE + 5_050,
    final,
    revision: final ? 1 : 0,
  };
}

/** Options a test may also unset (`transactionalId: undefined`). */
export type TestOptions = { [K in keyof KafkaKlineSinkOptions]?: KafkaKlineSinkOptions[K] | undefined };

/** A sink (transactional id `w1`, prefix `md`, no linger) on `cluster`, its drivers scripted by `hooks`. */
export function open(
  cluster: FakeKafkaCluster,
  options: TestOptions = {},
  hooks: FakeDriverHooks = {},
): Promise<KafkaKlineSink> {
  return KafkaKlineSink.open({
    brokers: '127.0.0.1:9092',
    topicPrefix: 'md',
    transactionalId: 'w1',
    lingerMs: 0,
    driver: cluster.factory(hooks),
    ...options,
  } as KafkaKlineSinkOptions);
}

/** The final bars a read_committed consumer of md.kline sees, as `code@minute`. */
export function committedFinals(cluster: FakeKafkaCluster): string[] {
  return cluster
    .readCommitted('md.kline')
    .map((r) => JSON.parse(r.value ?? '') as { code: string; ts: string; final: boolean })
    .filter((v) => v.final)
    .map((v) => `${v.code}@${(Date.parse(v.ts) - T0) / MINUTE}`);
}

/** The sink error `p` rejects with (failing the test if it resolves or rejects otherwise). */
export async function rejection(p: Promise<unknown>): Promise<KafkaKlineSinkError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KafkaKlineSinkError);
  return err as KafkaKlineSinkError;
}
