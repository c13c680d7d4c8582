/**
 * The producer interface of the transactional K-line sink ({@link KafkaKlineSink}): a
 * {@link KafkaProducerDriver} that can also run Kafka transactions, take other producers'
 * transactional ids away from them (fencing), and read a topic as a `read_committed` consumer.
 */
import type { KafkaDriverOptions, KafkaProducerDriver } from './kafka-producer-driver.js';

/** What a transactional driver takes. */
export interface KafkaTransactionalDriverOptions extends KafkaDriverOptions {
  /**
   * The producer's `transactional.id`; `undefined` for a plain idempotent producer (no
   * transactions: `begin`, `commit` and `abort` are then refused).
   */
  readonly transactionalId: string | undefined;
  /** How long the broker lets a transaction stay open before it aborts it (`transaction.timeout.ms`), ms. */
  readonly transactionTimeoutMs: number;
}

/** One record read back by {@link KafkaTransactionalDriver.readCommitted}. */
export interface KafkaCommittedRecord {
  readonly partition: number;
  readonly offset: bigint;
  /** UTF-8; `''` for a record without a key. */
  readonly key: string;
  /** UTF-8; `undefined` for a tombstone (a record whose value is null). */
  readonly value: string | undefined;
}

/**
 * A Kafka producer that runs transactions, as the K-line sink uses it. With a `transactionalId`:
 *
 * - `connect` initialises transactions (`InitProducerId`): the broker bumps the id's epoch, which
 *   fences every earlier producer with the same id and aborts its open transaction; it resolves once
 *   that abort is complete.
 * - `begin` opens a transaction; every `send` until `commit` or `abort` belongs to it (one at a time).
 * - A producer whose id another producer initialised since fails its next `send`/`commit` with the
 *   broker's `INVALID_PRODUCER_EPOCH` or `PRODUCER_FENCED` ({@link isProducerFencedError}).
 *
 * Without one it is the plain idempotent producer of {@link KafkaProducerDriver}.
 */
export interface KafkaTransactionalDriver extends KafkaProducerDriver {
  /** Opens a transaction (no request needed until the first `send`). */
  begin(): Promise<void>;
  /** Commits the open transaction; resolves once the broker's coordinator has it committed. */
  commit(): Promise<void>;
  /** Aborts the open transaction, if one is open. */
  abort(): Promise<void>;
  /**
   * Initialises a producer with each of `transactionalIds` and closes it again: each id's open
   * transaction is aborted now (not after its timeout), and its current holder, live or paused,
   * is fenced. Resolves once every abort is complete.
   */
  fence(transactionalIds: readonly string[]): Promise<void>;
  /**
   * Reads `topic` from its start to its end as a `read_committed` consumer would: records of
   * aborted transactions are left out, and "the end" is where every transaction open at the call
   * has ended (waiting for them at most `waitMs`, else rejecting with a `QF_KAFKA_WATERMARKS` error).
   * Per partition in offset order. A driver may return only the newest record of each key (what
   * compaction keeps; the built-in drivers do, so the sink's memory at a start is one record per
   * series however long its watermark topic grew since its last compaction).
   */
  readCommitted(topic: string, waitMs: number): Promise<KafkaCommittedRecord[]>;
}

/**
 * Builds a transactional driver; lets a caller bring its own client (or a test double). The K-line
 * sink calls it again, with the same options, each time it redoes a transaction after a transient
 * failure (a broker restarting): the new driver's `connect` initialises transactions with the same
 * transactional id, and the old one is closed. Its errors tell transient from final by the
 * broker's error name (kafkajs `type`, @platformatic/kafka `apiId`, such as
 * `COORDINATOR_NOT_AVAILABLE`), the client's error `name` or the socket's `code` (`ECONNRESET`).
 */
export type KafkaTransactionalDriverFactory = (
  options: KafkaTransactionalDriverOptions,
) => KafkaTransactionalDriver;

/** The broker's answers that mean another producer took this producer's transactional id. */
const FENCED_ERRORS: ReadonlySet<string> = new Set([
  'INVALID_PRODUCER_EPOCH',
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/**
 * Whether a driver's error (anywhere in its `cause`/`errors` chain) is the broker saying that this
 * producer's transactional id belongs to a newer producer now (kafkajs `type`, @platformatic/kafka
 * `apiId`): `INVALID_PRODUCER_EPOCH`, `PRODUCER_FENCED` or `INVALID_PRODUCER_ID_MAPPING`. The broker
 * answers the same way when it aborted the producer's transaction after its timeout.
 */
export function isProducerFencedError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 8) return false;
  const e = err as {
    type?: unknown;
    apiId?: unknown;
    cause?: unknown;
    originalError?: unknown;
    errors?: unknown;
  };
  if (typeof e.type === 'string' && FENCED_ERRORS.has(e.type)) return true;
  if (typeof e.apiId === 'string' && FENCED_ERRORS.has(e.apiId)) return true;
  if (isProducerFencedError(e.cause, depth + 1) || isProducerFencedError(e.originalError, depth + 1))
    return true;
  return Array.isArray(e.errors) && e.errors.some((x) => isProducerFencedError(x, depth + 1));
}
