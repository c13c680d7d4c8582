import { createHash } from 'node:crypto';
import { type KlineType } from '@quoteflow/core';
import { isQuoteflowError } from '@quoteflow/core/internal';
import { KafkaKlineSink, type KafkaDelivery } from '@quoteflow/sinks';
import type { Logger } from 'pino';
import { cliKafkaSinkOptions, type CliKafkaOptions } from './check-kafka.js';

/** How long the start of an unset `--kafka-delivery` waits to learn whether the brokers run transactions. */
const AUTO_PROBE_MS = 10_000;

/**
 * The transactional id of a K-line sync's Kafka sink, stable across restarts of the same sync:
 * `quoteflow.<prefix>.<hash of the codes and kline types>`, and the worker's id in a cluster (each
 * worker its own; whoever takes over a dead worker's series fences that one's id).
 */
export function klineTransactionalId(
  kafka: CliKafkaOptions,
  universe: { readonly codes: readonly string[]; readonly klineTypes: readonly KlineType[] },
  workerId?: string,
): string {
  const base =
    kafka.transactionalId ??
    `quoteflow.${kafka.topicPrefix}.${createHash('sha256')
      .update(JSON.stringify([[...universe.codes].sort(), [...universe.klineTypes].sort((a, b) => a - b)]))
      .digest('hex')
      .slice(0, 16)}`;
  return workerId === undefined ? base : `${base}.${workerId}`;
}

/**
 * The delivery a K-line sync's Kafka sink runs with: the one asked for, or, unset, exactly once
 * where the brokers run transactions (a sink opened and closed once with `transactionalId`) and
 * at least once, with a warning, where they cannot. Asked for, exactly once on brokers that cannot
 * is the sink's error (exit 1, naming the brokers), before any request to the service.
 */
export async function resolveKafkaDelivery(
  kafka: CliKafkaOptions,
  transactionalId: string,
  options: { readonly timeoutMs: number; readonly flag: string; readonly logger: Logger },
): Promise<KafkaDelivery> {
  if (kafka.delivery === 'at-least-once') return 'at-least-once';
  const auto = kafka.delivery === undefined;
  try {
    const probe = await KafkaKlineSink.open({
      ...cliKafkaSinkOptions(kafka, {}),
      delivery: 'exactly-once',
      transactionalId,
      deliveryTimeoutMs: auto ? Math.min(AUTO_PROBE_MS, options.timeoutMs) : options.timeoutMs,
    });
    await probe.close();
    return 'exactly-once';
  } catch (err) {
    if (!auto || !isQuoteflowError(err, 'QF_KAFKA_UNREACHABLE')) throw err;
    options.logger.warn(
      { brokers: [kafka.brokers].flat().join(','), err: err instanceof Error ? err.message : String(err) },
      `Kafka (${options.flag}) cannot run transactions: delivering K-lines at least once (a final bar may repeat after a crash; consumers dedupe on key + kline_type + ts); --kafka-delivery exactly-once makes this an error`,
    );
    return 'at-least-once';
  }
}
