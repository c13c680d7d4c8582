import { QuoteflowError } from '@quoteflow/core';
import type { KafkaMessage } from './to-kafka-message.js';

/**
 * Some records were not acknowledged by the broker: the driver gave up (a non-retriable error),
 * or no acknowledgement came within `deliveryTimeoutMs`. `undelivered` lists every such record's
 * topic, key and value, in the order they were written; for each the outcome is unknown (the
 * broker may have stored it without answering), never "stored twice" (idempotent producer).
 * Not `retryable`: the sink has stopped, and sending the records again from a new producer could
 * store some of them twice; the list is there to decide per use.
 */
export class KafkaDeliveryError extends QuoteflowError {
  /** The messages not acknowledged, in write order. */
  readonly undelivered: readonly KafkaMessage[];
  constructor(undelivered: readonly KafkaMessage[], reason: string, cause?: unknown) {
    super('QF_KAFKA_DELIVERY', `kafka: ${describe(undelivered)} not acknowledged by the broker: ${reason}`, {
      retryable: false,
      cause,
    });
    this.undelivered = undelivered;
  }
}

function describe(messages: readonly KafkaMessage[]): string {
  const perTopic = new Map<string, number>();
  for (const m of messages) perTopic.set(m.topic, (perTopic.get(m.topic) ?? 0) + 1);
  const topics = [...perTopic].map(([t, n]) => `${t} ×${n}`).join(', ');
  return `${messages.length} record${messages.length === 1 ? '' : 's'} (${topics})`;
}
