import { QuoteflowError, type ErrorCode } from '@quoteflow/core';
import { describeKafkaFailure, kafkaFailureKind, PERMANENT_KAFKA_FAILURES } from './kafka-failure.js';
import type { KafkaSecurity } from './kafka-security.js';
import { OperationTimeout } from './internal/with-timeout.js';
import { isProducerFencedError } from './kafka-transactional-driver.js';

/** Stable codes of the Kafka K-line sink's errors. */
export const KAFKA_KLINE_SINK_ERROR_CODES = [
  'QF_FENCED',
  'QF_KAFKA_TRANSACTION',
  'QF_KAFKA_DELIVERY',
  'QF_KAFKA_WATERMARKS',
  'QF_KAFKA_UNREACHABLE',
  'QF_BUFFER_OVERFLOW',
  'QF_CLOSED',
] as const satisfies readonly ErrorCode[];
export type KafkaKlineSinkErrorCode = (typeof KAFKA_KLINE_SINK_ERROR_CODES)[number];

/**
 * An error of {@link KafkaKlineSink} (bad options are core's `InvalidOptionError`, thrown by `open`):
 *
 * - `QF_FENCED`: another producer took the sink's transactional id (a newer process with the same
 *   id, or a worker's `fence()`), or the broker aborted its transaction after
 *   `transactionTimeoutMs`, or, redoing a transaction, the sink found a commit it did not make
 *   (to its series, or under its transactional id). Nothing of the open transaction is visible; the sink has stopped. Not
 *   retryable: the id (or the series) belongs to someone else now.
 * - `QF_KAFKA_TRANSACTION`: a transaction could not be committed: the sink redid it for
 *   `deliveryTimeoutMs` (a broker restarting) without success, or the broker refused it. Retryable
 *   by opening the sink again: its watermarks then say what was committed (after a commit that got
 *   no answer, that may include the last one).
 * - `QF_KAFKA_DELIVERY`: at least once, records not acknowledged (the cause lists them).
 * - `QF_KAFKA_WATERMARKS`: the watermark topic could not be read to its end: a transaction on it
 *   stayed open longer than `watermarkReadTimeoutMs`, the broker did not answer, or a record is
 *   not a watermark. Retryable (unless malformed).
 * - `QF_KAFKA_UNREACHABLE`: `open` could not connect to the brokers, initialise transactions or
 *   create the topics (the message names the brokers). Retryable.
 * - `QF_BUFFER_OVERFLOW`: more than `maxBufferedRecords` records taken and not acknowledged by
 *   the broker; the sink has stopped (a record it dropped could not be told from one committed).
 * - `QF_CLOSED`: `write`, `checkpoint`, `refresh` or `fence` after `close()`.
 */
export class KafkaKlineSinkError extends QuoteflowError {
  declare readonly code: KafkaKlineSinkErrorCode;
  constructor(
    code: KafkaKlineSinkErrorCode,
    message: string,
    opts: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super(code, message, opts);
  }
}

/** What {@link klineSinkFailure} needs to know of the sink. */
export interface KlineSinkFailureContext {
  readonly name: string;
  readonly exactlyOnce: boolean;
  readonly transactionalId: string | undefined;
  readonly transactionTimeoutMs: number;
  readonly brokers: readonly string[];
  /** TLS and SASL settings, to name a login or certificate failure ({@link describeKafkaFailure}). */
  readonly security?: KafkaSecurity;
  /** The topics the sink writes, to name a permission failure. */
  readonly topics?: readonly string[];
}

/** A driver's error in the user's terms where it is a known kind (login, TLS, ACL), else its message. */
function reasonOf(cause: unknown, sink: KlineSinkFailureContext): string {
  const described = describeKafkaFailure(cause, {
    brokers: sink.brokers,
    security: sink.security ?? {},
    ...(sink.topics === undefined ? {} : { topics: sink.topics }),
    transactionalId: sink.transactionalId,
  });
  return described ?? (cause instanceof Error ? cause.message : String(cause));
}

/**
 * The sink error a driver's failure means: `QF_FENCED` (exactly once, the broker says another
 * producer has the id), `QF_KAFKA_TRANSACTION` (exactly once, anything else: `what` says what did
 * not happen), `QF_KAFKA_DELIVERY` (at least once). A sink error stays as it is.
 */
export function klineSinkFailure(
  cause: unknown,
  sink: KlineSinkFailureContext,
  what = 'the transaction was not committed',
): KafkaKlineSinkError {
  if (cause instanceof KafkaKlineSinkError) return cause;
  const reason = reasonOf(cause, sink);
  if (!sink.exactlyOnce)
    return new KafkaKlineSinkError('QF_KAFKA_DELIVERY', `${sink.name}: ${reason}`, { cause });
  if (isProducerFencedError(cause)) {
    return new KafkaKlineSinkError(
      'QF_FENCED',
      `${sink.name}: another producer took transactional id ${JSON.stringify(sink.transactionalId)} (a newer process with the same id, or a worker's fence()), or the broker aborted its transaction after transactionTimeoutMs = ${sink.transactionTimeoutMs} ms; nothing of the open transaction is visible, and this sink has stopped`,
      { cause },
    );
  }
  return new KafkaKlineSinkError(
    'QF_KAFKA_TRANSACTION',
    `${sink.name} on ${sink.brokers.join(',')}: ${what}: ${reason}; open the sink again to resume from its committed watermarks`,
    { retryable: true, cause },
  );
}

/**
 * The sink error of an `open` that could not connect, initialise transactions or create the topics:
 * `QF_KAFKA_UNREACHABLE`, naming the brokers; after a timeout, exactly once, with what transactions
 * need (a broker that cannot create its transaction state log answers InitProducerId with "not
 * available" for ever).
 */
export function klineSinkOpenFailure(cause: unknown, sink: KlineSinkFailureContext): KafkaKlineSinkError {
  const brokers = sink.brokers.join(',');
  const id =
    sink.transactionalId === undefined ? '' : ` (transactional id ${JSON.stringify(sink.transactionalId)})`;
  const reason = reasonOf(cause, sink);
  const kind = kafkaFailureKind(cause)?.kind;
  const hint =
    sink.exactlyOnce && cause instanceof OperationTimeout
      ? `; if ${brokers} answer, check that they run transactions (transaction.state.log.replication.factor and .min.isr at most the brokers there are)`
      : '';
  return new KafkaKlineSinkError(
    'QF_KAFKA_UNREACHABLE',
    `${sink.name} could not open on ${brokers}${id}: ${reason}${hint}`,
    {
      // A refused login, an untrusted certificate or a missing permission stays so on a retry.
      retryable: kind === undefined || !PERMANENT_KAFKA_FAILURES.has(kind),
      cause,
    },
  );
}
