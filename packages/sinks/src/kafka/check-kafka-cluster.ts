/**
 * Checks, before a pipeline fetches anything, that a Kafka cluster takes this client: it answers,
 * the login and certificates are accepted, and the topics exist (or are created now, with the
 * partitions, replication factor and configs asked for). Failures no retry mends (a refused
 * login, an untrusted certificate, a missing permission, a missing topic that may not be created)
 * reject at once, in the user's terms; an unreachable broker is retried until `timeoutMs`.
 */
import type { Admin } from 'kafkajs';
import { QuoteflowError } from '@quoteflow/core';
import { monotonicClock, retryWithBudget } from '@quoteflow/core/internal';
import {
  describeKafkaFailure,
  kafkaFailureKind,
  PERMANENT_KAFKA_FAILURES,
  type KafkaFailureKind,
} from './kafka-failure.js';
import type { KafkaTopicSpec } from './kafka-producer-driver.js';
import { refusedEverywhere } from './internal/first-connect.js';
import { kafkajsLibrary } from './internal/kafka-clients.js';
import { kafkajsNewTopic } from './internal/kafkajs-config.js';
import { kafkajsSecurity, resolveKafkaSecurity, type KafkaSecurity } from './kafka-security.js';
import type { KafkaSinkOptions } from './kafka-sink.js';

/** What {@link checkKafkaCluster} checks. */
export interface KafkaClusterCheck extends Pick<KafkaSinkOptions, 'brokers' | 'clientId' | 'tls' | 'sasl'> {
  /** The topics the pipeline will write. */
  readonly topics: readonly KafkaTopicSpec[];
  /** Create the missing ones (else a missing topic is the error). */
  readonly createTopics: boolean;
  /** How long an unreachable cluster is retried, ms. */
  readonly timeoutMs: number;
  /** Stops the wait (SIGINT). */
  readonly signal?: AbortSignal;
}

/**
 * Why {@link checkKafkaCluster} failed (`QF_KAFKA_CLUSTER`, not retryable: the check has retried
 * what a retry can mend): `kind` says what.
 */
export class KafkaClusterError extends QuoteflowError {
  /** Always `QF_KAFKA_CLUSTER`. */
  declare readonly code: 'QF_KAFKA_CLUSTER';
  /** What failed: a {@link KafkaFailureKind}, a missing topic, no answer in time, or something else (`undefined`). */
  readonly kind: KafkaFailureKind | 'missing-topic' | 'timeout' | undefined;
  constructor(kind: KafkaClusterError['kind'], message: string, cause?: unknown) {
    super('QF_KAFKA_CLUSTER', message, { cause });
    this.kind = kind;
  }
}

/** Rejects with a {@link KafkaClusterError} unless the cluster takes this client and its topics are there. */
export async function checkKafkaCluster(check: KafkaClusterCheck): Promise<void> {
  const brokers = (typeof check.brokers === 'string' ? check.brokers.split(',') : [...check.brokers])
    .map((b) => b.trim())
    .filter(Boolean);
  const security = resolveKafkaSecurity(check.tls, check.sasl);
  const { Kafka, logLevel } = kafkajsLibrary();
  const admin = new Kafka({
    clientId: check.clientId ?? 'quoteflow',
    brokers,
    connectionTimeout: Math.min(10_000, check.timeoutMs),
    requestTimeout: Math.min(30_000, check.timeoutMs),
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    ...kafkajsSecurity(security),
  }).admin();
  const fail = (err: unknown, topics?: readonly string[]): KafkaClusterError => {
    const kind = kafkaFailureKind(err)?.kind;
    const message =
      describeKafkaFailure(err, { brokers, security, ...(topics === undefined ? {} : { topics }) }) ??
      `Kafka at ${brokers.join(',')}: ${messageWithInner(err)}`;
    return new KafkaClusterError(kind, message, err);
  };
  try {
    await connect(admin, brokers, check.timeoutMs, check.signal, fail);
    await checkTopics(admin, brokers, security, check, fail);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * How long every broker may refuse connections (or fail to resolve) before the check gives up,
 * naming the cause: a broker that restarts comes back within it, and a wrong address is said in
 * seconds instead of after the whole timeout (kept for brokers that accept and stall).
 */
const KAFKA_REFUSED_GIVE_UP_MS = 3_000;

/**
 * Connects `admin`, retrying what may mend (core's `retryWithBudget`, every 500 ms on the monotonic
 * clock, so a step of the wall clock moves no deadline) for `timeoutMs`, or until every broker has
 * refused connections for {@link KAFKA_REFUSED_GIVE_UP_MS}, or `signal` stops it.
 */
async function connect(
  admin: Admin,
  brokers: readonly string[],
  timeoutMs: number,
  signal: AbortSignal | undefined,
  fail: (err: unknown) => KafkaClusterError,
): Promise<void> {
  let refusedSinceMs: number | undefined;
  let last: unknown;
  const attempt = async (): Promise<void> => {
    try {
      await admin.connect();
    } catch (err) {
      last = err;
      const kind = kafkaFailureKind(err)?.kind;
      if (kind !== undefined && PERMANENT_KAFKA_FAILURES.has(kind)) throw fail(err);
      // Nothing listens (or the name does not resolve) at every broker: said in seconds.
      const refused = kind === 'unreachable' ? await refusedEverywhere(brokers, 2_000) : undefined;
      const nowMs = monotonicClock.now();
      if (refused === undefined) refusedSinceMs = undefined;
      else if (nowMs - (refusedSinceMs ??= nowMs) >= KAFKA_REFUSED_GIVE_UP_MS)
        throw new KafkaClusterError(
          'unreachable',
          `no Kafka broker takes connections: ${refused} (for ${KAFKA_REFUSED_GIVE_UP_MS / 1000} s; is it running, and is that its address?)`,
          err,
        );
      throw err;
    }
  };
  try {
    await retryWithBudget(attempt, {
      budgetMs: timeoutMs,
      baseDelayMs: 500,
      maxDelayMs: 500,
      jitter: 'none',
      retryable: (err) => !(err instanceof KafkaClusterError),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (err) {
    if (err instanceof KafkaClusterError) throw err;
    const lastSaid =
      last === undefined
        ? ''
        : ` (last: ${describeKafkaFailure(last, { brokers, security: {} }) ?? (last as Error).message})`;
    throw new KafkaClusterError(
      'timeout',
      `Kafka at ${brokers.join(',')} did not answer ${signal?.aborted === true ? 'before the command was stopped' : 'in time'}${lastSaid}`,
      last,
    );
  }
}

async function checkTopics(
  admin: Admin,
  brokers: readonly string[],
  security: KafkaSecurity,
  check: KafkaClusterCheck,
  fail: (err: unknown, topics?: readonly string[]) => KafkaClusterError,
): Promise<void> {
  if (check.topics.length === 0) return;
  let existing: Set<string>;
  try {
    existing = new Set(await admin.listTopics());
  } catch (err) {
    throw fail(
      err,
      check.topics.map((t) => t.topic),
    );
  }
  const missing = check.topics.filter((t) => !existing.has(t.topic));
  if (missing.length === 0) return;
  const names = missing.map((t) => t.topic);
  if (!check.createTopics) {
    const who = security.sasl === undefined ? '' : ` (or user ${security.sasl.username} may not see them)`;
    throw new KafkaClusterError(
      'missing-topic',
      `topic ${names.join(', ')} does not exist at ${brokers.join(',')}${who}, and topic creation is off (--kafka-create-topics false): have it created first`,
    );
  }
  try {
    // No waiting for leaders here: kafkajs's wait gives up on the "unknown topic" a KRaft broker
    // answers right after a create; the sinks' producers wait for leaders themselves.
    await admin.createTopics({ waitForLeaders: false, topics: missing.map(kafkajsNewTopic) });
  } catch (err) {
    // Created meanwhile by another process (or the answer was lost): fine once every topic is listed.
    if (kafkaFailureKind(err) !== undefined || !(await allListed(admin, names))) throw fail(err, names);
  }
}

/** Whether every topic of `names` is listed within a few seconds (the broker's metadata may lag a create). */
async function allListed(admin: Admin, names: readonly string[]): Promise<boolean> {
  const unlisted = new KafkaClusterError('missing-topic', `${names.join(', ')} not listed yet`);
  try {
    await retryWithBudget(
      async () => {
        const listed = new Set(await admin.listTopics().catch(() => [] as string[]));
        if (!names.every((t) => listed.has(t))) throw unlisted;
      },
      {
        budgetMs: 5_000,
        baseDelayMs: 200,
        maxDelayMs: 200,
        jitter: 'none',
        retryable: (e) => e === unlisted,
      },
    );
    return true;
  } catch {
    return false;
  }
}

/** An error's message, with those of the errors it aggregates (kafkajs's topic creation errors). */
function messageWithInner(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const inner = (err as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.length > 0
    ? `${err.message}: ${inner.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`
    : err.message;
}
