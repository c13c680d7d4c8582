/**
 * Which failures of a transactional operation the K-line sink redoes the transaction for: those of
 * a broker restarting or a coordinator moving, never a fencing or a refused authorization.
 */
import { KafkaKlineSinkError } from '../kafka-kline-sink-error.js';
import { isProducerFencedError } from '../kafka-transactional-driver.js';

/**
 * Broker answers (kafkajs `type`, @platformatic/kafka `apiId`) that say "not now": the coordinator
 * or a leader is unavailable, loading or elsewhere, the previous transaction's markers are still
 * being written, the request timed out.
 */
const TRANSIENT_ANSWERS: ReadonlySet<string> = new Set([
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'CONCURRENT_TRANSACTIONS',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_OR_FOLLOWER',
  'NOT_LEADER_FOR_PARTITION',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'KAFKA_STORAGE_ERROR',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
]);

/** Client-side failures of the connection or of a wait (kafkajs and quoteflow error names). */
const TRANSIENT_NAMES: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSBrokerNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
  'OperationTimeout',
]);

/** Socket errors (Node) and @platformatic/kafka's network and timeout errors (`code`). */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'PLT_KFK_NETWORK',
  'PLT_KFK_TIMEOUT',
]);

/** Broker answers and client errors that a retry cannot change: credentials, permissions. */
const DENIED =
  /AUTHORIZATION_FAILED|SASL_AUTHENTICATION_FAILED|ILLEGAL_SASL_STATE|UNSUPPORTED_SASL_MECHANISM/;
const DENIED_NAMES: ReadonlySet<string> = new Set(['KafkaJSSASLAuthenticationError']);
const DENIED_CODES: ReadonlySet<string> = new Set(['PLT_KFK_AUTHENTICATION']);

interface ErrorFields {
  readonly name?: unknown;
  readonly type?: unknown;
  readonly apiId?: unknown;
  readonly code?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
  readonly errors?: unknown;
}

/**
 * Whether a driver's failure of a transactional operation is transient, so that the transaction
 * is worth redoing with a new producer: the broker, the transaction coordinator or a partition
 * leader unavailable or moved (`COORDINATOR_NOT_AVAILABLE`, `NOT_COORDINATOR`, kafkajs's "could
 * not find the coordinator", …), the connection refused or lost, a request or a wait timed out, or
 * a retryable sink error (the watermark topic could not be read). Looks through the whole
 * `cause`/`originalError`/`errors` chain (kafkajs wraps the broker's answer in "retries
 * exceeded"). Never a fencing (`QF_FENCED` at once) nor a refused authorization or authentication.
 */
export function isRetryableKafkaError(err: unknown): boolean {
  if (isProducerFencedError(err) || some(err, isDenied)) return false;
  // A sink error carries its own verdict (QF_FENCED and a malformed watermark are final).
  if (err instanceof KafkaKlineSinkError) return err.retryable;
  return some(err, isTransient);
}

function isTransient(e: ErrorFields): boolean {
  if (typeof e.type === 'string' && TRANSIENT_ANSWERS.has(e.type)) return true;
  if (typeof e.apiId === 'string' && TRANSIENT_ANSWERS.has(e.apiId)) return true;
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  return typeof e.code === 'string' && TRANSIENT_CODES.has(e.code);
}

function isDenied(e: ErrorFields): boolean {
  if (typeof e.type === 'string' && DENIED.test(e.type)) return true;
  if (typeof e.apiId === 'string' && DENIED.test(e.apiId)) return true;
  if (typeof e.name === 'string' && DENIED_NAMES.has(e.name)) return true;
  return typeof e.code === 'string' && DENIED_CODES.has(e.code);
}

/** Whether `test` holds for `err` or any error in its chain. */
function some(err: unknown, test: (e: ErrorFields) => boolean, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 8) return false;
  const e = err as ErrorFields;
  if (test(e)) return true;
  if (some(e.cause, test, depth + 1) || some(e.originalError, test, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.some((x) => some(x, test, depth + 1));
}
