/**
 * What went wrong between a Kafka client and a secured cluster, in the user's terms: a refused
 * login, an untrusted or misnamed certificate, a missing client certificate, a protocol mismatch,
 * a missing permission. Both drivers' errors are read (kafkajs's `type`/`code`/`name`,
 * @platformatic/kafka's `apiId`/`code`, Node's TLS codes), through `cause`, `originalError` and
 * `errors`.
 */
import type { KafkaSecurity } from './kafka-security.js';

/** The kinds of failure {@link kafkaFailureKind} tells apart. */
export type KafkaFailureKind =
  | 'authentication'
  | 'untrusted-certificate'
  | 'hostname-mismatch'
  | 'client-certificate'
  | 'tls-to-plaintext'
  | 'plaintext-to-tls'
  | 'topic-authorization'
  | 'cluster-authorization'
  | 'transactional-id-authorization'
  | 'group-authorization'
  | 'coordinator-not-found'
  | 'unreachable';

/** Failures no retry mends: the command should stop at once rather than wait out its timeout. */
export const PERMANENT_KAFKA_FAILURES: ReadonlySet<KafkaFailureKind> = new Set([
  'authentication',
  'untrusted-certificate',
  'hostname-mismatch',
  'client-certificate',
  'tls-to-plaintext',
  'plaintext-to-tls',
  'topic-authorization',
  'cluster-authorization',
  'transactional-id-authorization',
  'group-authorization',
]);

const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const BY_BROKER_ERROR: Readonly<Record<string, KafkaFailureKind>> = {
  SASL_AUTHENTICATION_FAILED: 'authentication',
  TOPIC_AUTHORIZATION_FAILED: 'topic-authorization',
  CLUSTER_AUTHORIZATION_FAILED: 'cluster-authorization',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'transactional-id-authorization',
  GROUP_AUTHORIZATION_FAILED: 'group-authorization',
};

/** A failure {@link kafkaFailureKind} recognised. */
export interface KafkaFailure {
  /** What failed. */
  kind: KafkaFailureKind;
  /** The broker named by the error, when it names one (`host:port`). */
  broker?: string;
}

function* errorTree(err: unknown, depth = 0): Generator<Record<string, unknown>> {
  if (typeof err !== 'object' || err === null || depth > 8) return;
  const e = err as Record<string, unknown>;
  yield e;
  yield* errorTree(e['cause'], depth + 1);
  yield* errorTree(e['originalError'], depth + 1);
  if (Array.isArray(e['errors'])) for (const x of e['errors']) yield* errorTree(x, depth + 1);
}

function kindOf(e: Record<string, unknown>): KafkaFailureKind | undefined {
  const str = (k: string): string => (typeof e[k] === 'string' ? (e[k] as string) : '');
  const code = str('code');
  const message = str('message');
  const byBroker = BY_BROKER_ERROR[str('type')] ?? BY_BROKER_ERROR[str('apiId')];
  if (byBroker !== undefined) return byBroker;
  if (str('name') === 'KafkaJSSASLAuthenticationError' || code === 'PLT_KFK_AUTHENTICATION')
    return 'authentication';
  if (UNTRUSTED.has(code)) return 'untrusted-certificate';
  // kafkajs drops the broker's answer to FindCoordinator (TRANSACTIONAL_ID_AUTHORIZATION_FAILED
  // among them) and says only this.
  if (str('name') === 'KafkaJSGroupCoordinatorNotFound') return 'coordinator-not-found';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'hostname-mismatch';
  if (/ALERT_BAD_CERTIFICATE|CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/.test(code)) return 'client-certificate';
  if (/WRONG_VERSION_NUMBER/.test(code) || /verify the broker supports TLS/.test(message))
    return 'tls-to-plaintext';
  if (/Broker requires TLS/.test(message)) return 'plaintext-to-tls';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH') return 'unreachable';
  return undefined;
}

/** The most specific kind of failure in `err`'s tree, with the broker it names, if any. */
export function kafkaFailureKind(err: unknown): KafkaFailure | undefined {
  let found: KafkaFailure | undefined;
  let broker: string | undefined;
  for (const e of errorTree(err)) {
    if (typeof e['broker'] === 'string') broker ??= e['broker'];
    const m = typeof e['message'] === 'string' ? /Connection to (\S+:\d+) failed/.exec(e['message']) : null;
    if (m?.[1] !== undefined) broker ??= m[1];
    const kind = kindOf(e);
    // A permission or login answer outranks the network errors around it.
    if (kind !== undefined && (found === undefined || found.kind === 'unreachable')) found = { kind };
  }
  return found === undefined ? undefined : { ...found, ...(broker === undefined ? {} : { broker }) };
}

/** What a message about a failure may name: the brokers, the login, the topics concerned. */
export interface KafkaFailureContext {
  /** The bootstrap brokers, named when the error names no broker of its own. */
  readonly brokers: readonly string[];
  /** The client's TLS and SASL settings (the user and mechanism are named; never the password). */
  readonly security: KafkaSecurity;
  /** The topics written, named by a permission failure. */
  readonly topics?: readonly string[];
  /** The producer's transactional id, named by a transactional failure. */
  readonly transactionalId?: string | undefined;
}

/**
 * One sentence naming the broker and the kind of failure, as the user configured it
 * ("authentication failed for user qf-scram with SCRAM-SHA-512 at 127.0.0.1:9093 …"); `undefined`
 * when `err` is none of {@link KafkaFailureKind}. Never contains a password or key.
 */
export function describeKafkaFailure(err: unknown, context: KafkaFailureContext): string | undefined {
  const found = kafkaFailureKind(err);
  if (found === undefined) return undefined;
  const at = found.broker ?? context.brokers.join(',');
  const { sasl, tls } = context.security;
  const who =
    sasl === undefined
      ? tls?.cert === undefined
        ? 'the client'
        : 'the client certificate'
      : `user ${sasl.username}`;
  const topics = context.topics?.length ? context.topics.join(', ') : 'the topics';
  switch (found.kind) {
    case 'authentication':
      return sasl === undefined
        ? `authentication failed at ${at}`
        : `authentication failed for user ${sasl.username} with ${sasl.mechanism} at ${at} (wrong password, or no such user for ${sasl.mechanism}: check sasl.username, sasl.password, sasl.mechanism)`;
    case 'untrusted-certificate':
      return tls?.ca === undefined
        ? `certificate of ${at} is not trusted by the system's CA certificates (set ssl.ca.location to the cluster's CA)`
        : `certificate of ${at} is not trusted by ssl.ca.location`;
    case 'hostname-mismatch':
      return `certificate of ${at} does not name that host (ssl.endpoint.identification.algorithm=https; connect by a name the certificate holds)`;
    case 'client-certificate':
      return `${at} refused the TLS handshake: it wants a client certificate its CA signed (ssl.certificate.location, ssl.key.location)`;
    case 'tls-to-plaintext':
      return `${at} does not speak TLS (security.protocol ${sasl === undefined ? 'SSL' : 'SASL_SSL'} against a plaintext listener?)`;
    case 'plaintext-to-tls':
      return `${at} requires TLS (set security.protocol to SSL or SASL_SSL)`;
    case 'topic-authorization':
      return `${who} may not write or create ${topics} at ${at} (TOPIC_AUTHORIZATION_FAILED: the cluster's ACLs)`;
    case 'cluster-authorization':
      return `${who} may not create or write ${topics} at ${at} (CLUSTER_AUTHORIZATION_FAILED: creating a topic needs CREATE, producing needs WRITE on the topic): have the topics created and WRITE granted, or grant CREATE`;
    case 'transactional-id-authorization':
      return `${who} may not use transactional id ${context.transactionalId ?? ''} at ${at} (TRANSACTIONAL_ID_AUTHORIZATION_FAILED: the cluster's ACLs); or --kafka-delivery at-least-once`;
    case 'group-authorization':
      return `${who} may not use its consumer group at ${at} (GROUP_AUTHORIZATION_FAILED)`;
    case 'coordinator-not-found':
      return context.transactionalId === undefined
        ? `${at} named no coordinator for ${who} (FindCoordinator failed)`
        : `${at} named no transaction coordinator for transactional id ${context.transactionalId}: ${who} may not be allowed that transactional id (the cluster's ACLs; kafkajs reports TRANSACTIONAL_ID_AUTHORIZATION_FAILED so), or the coordinator is not available yet; or --kafka-delivery at-least-once`;
    case 'unreachable':
      return `${at} cannot be reached`;
  }
}
