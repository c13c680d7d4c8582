// Types only: the client (with its Avro, JSON Schema and Protobuf helpers) and avsc load in
// `open`, so importing @quoteflow/sinks (and every CLI command's start-up) does not pay for them.
import type { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type avsc from 'avsc';
import { InvalidOptionError, QuoteflowError } from '@quoteflow/core';
import { requirePackagesOf } from '../../internal/optional-packages.js';
import { withTimeout } from '../internal/with-timeout.js';
import {
  DEFAULT_TOPIC_PREFIX,
  KAFKA_TOPIC_KINDS,
  type KafkaMessageValue,
  type KafkaTopicKind,
  type KafkaValueSerializer,
} from '../to-kafka-message.js';
import { AVRO_SCHEMAS, type AvroRecordSchema } from './avro-schemas.js';
import { SchemaRegistryError } from './schema-registry-error.js';

/** Options of {@link SchemaRegistrySerializer.open}. */
export interface SchemaRegistrySerializerOptions {
  /**
   * The registry's base URL, as Confluent clients take it: `http://host:8081` for a Confluent
   * Schema Registry, `http://host:8080/apis/ccompat/v7` for Apicurio. No credentials in it.
   */
  readonly url: string;
  /** Basic auth (both or neither); never printed. */
  readonly username?: string;
  /** The password of `username`. */
  readonly password?: string;
  /** The topics are `<topicPrefix>.<kind>`, their subjects `<topicPrefix>.<kind>-value`. */
  readonly topicPrefix?: string;
  /** The topic kinds to get schema ids for (all three by default). */
  readonly kinds?: readonly KafkaTopicKind[];
  /** A schema of your own for a kind (a newer version of quoteflow's, say); the values must fit it. */
  readonly schemas?: Partial<Record<KafkaTopicKind, AvroRecordSchema>>;
  /** How long getting every id may take, ms. */
  readonly timeoutMs?: number;
}

/** Defaults of {@link SchemaRegistrySerializerOptions}. */
export const SCHEMA_REGISTRY_DEFAULTS = {
  topicPrefix: DEFAULT_TOPIC_PREFIX,
  kinds: KAFKA_TOPIC_KINDS,
  timeoutMs: 20_000,
} as const;

/** What one topic's values are written with. */
interface TopicSchema {
  readonly subject: string;
  readonly id: number;
  readonly type: avsc.Type;
}

/**
 * A {@link KafkaValueSerializer} writing Avro in the Confluent wire format (byte 0, the schema id
 * as 4 bytes big-endian, the Avro binary), for any registry speaking Confluent's REST API
 * (Confluent Schema Registry, Apicurio's `/apis/ccompat/v7`, Redpanda, Karapace).
 *
 * `open` gets every topic's schema id before anything is produced: subject `<topic>-value`
 * (TopicNameStrategy), the schema registered there (a new subject gets compatibility BACKWARD; an
 * existing one keeps its own), or, where registering is refused (403: a read-only principal),
 * looked up among the versions already registered. Any failure (unreachable, 401, 403 with the
 * schema not registered, 409 incompatible) rejects with a {@link SchemaRegistryError} naming the
 * registry and the subject. Encoding is then local and synchronous.
 *
 * @example
 * ```ts
 * const avro = await SchemaRegistrySerializer.open({ url: 'http://127.0.0.1:8081', topicPrefix: 'md' });
 * const sink = new KafkaSink({ brokers: '127.0.0.1:9092', topicPrefix: 'md', valueSerializer: avro });
 * ```
 */
export class SchemaRegistrySerializer implements KafkaValueSerializer {
  /** `avro`. */
  readonly format = 'avro';
  /** The registry's URL (no credentials). */
  readonly url: string;
  readonly #topics: ReadonlyMap<string, TopicSchema>;

  private constructor(url: string, topics: ReadonlyMap<string, TopicSchema>) {
    this.url = url;
    this.#topics = topics;
  }

  /** Gets (registers or looks up) the schema id of every topic; see the class. */
  static async open(options: SchemaRegistrySerializerOptions): Promise<SchemaRegistrySerializer> {
    const url = checkRegistryUrl(options.url);
    const o = { ...SCHEMA_REGISTRY_DEFAULTS, ...definedOnly(options), url };
    if ((o.username === undefined) !== (o.password === undefined)) {
      throw new InvalidOptionError(
        'username',
        'schema registry: give both username and password, or neither',
      );
    }
    const auth = o.username === undefined ? undefined : { username: o.username, password: o.password! };
    requirePackagesOf('schema-registry');
    const [{ SchemaRegistry }, { default: avro }] = await Promise.all([
      import('@kafkajs/confluent-schema-registry'),
      import('avsc'),
    ]);
    const registry = new SchemaRegistry({
      host: url,
      ...(auth === undefined ? {} : { auth }),
      clientId: 'quoteflow',
      retry: { retries: 1 },
    });
    const topics = new Map<string, TopicSchema>();
    for (const kind of new Set(o.kinds)) {
      const topic = `${o.topicPrefix}.${kind}`;
      const subject = `${topic}-value`;
      const schema = o.schemas?.[kind] ?? AVRO_SCHEMAS[kind];
      const type = avro.Type.forSchema(schema as avsc.Schema);
      const id = await withTimeout(schemaId(registry, subject, schema), o.timeoutMs, 'timeoutMs').catch(
        (err: unknown) => {
          throw registryError(url, subject, err);
        },
      );
      topics.set(topic, { subject, id, type });
    }
    return new SchemaRegistrySerializer(url, topics);
  }

  /** The subject and schema id each topic's values are written with. */
  subjects(): ReadonlyMap<string, { readonly subject: string; readonly id: number }> {
    return new Map([...this.#topics].map(([t, s]) => [t, { subject: s.subject, id: s.id }]));
  }

  /** The wire format of `value` for `topic` (one `open` got the id of); throws for another topic. */
  serialize(topic: string, _kind: KafkaTopicKind, value: KafkaMessageValue): Buffer {
    const schema = this.#topics.get(topic);
    if (schema === undefined) {
      throw new InvalidOptionError(
        'topic',
        `schema registry ${this.url}: no schema for topic ${topic} (opened for ${[...this.#topics.keys()].join(', ')})`,
      );
    }
    const body = schema.type.toBuffer(value);
    const out = Buffer.allocUnsafe(5 + body.length);
    out[0] = 0; // the Confluent wire format's magic byte
    out.writeUInt32BE(schema.id, 1);
    body.copy(out, 5);
    return out;
  }
}

/** Registers `schema` under `subject`, or looks it up where registering is refused (403). */
async function schemaId(
  registry: SchemaRegistry,
  subject: string,
  schema: AvroRecordSchema,
): Promise<number> {
  // SchemaType.AVRO (the client's enum, a value: not imported here).
  const confluent = { type: 'AVRO' as SchemaType.AVRO, schema: JSON.stringify(schema) };
  try {
    return (await registerKeepingCompatibility(registry, subject, confluent)).id;
  } catch (err) {
    if (statusOf(err) !== 403) throw err;
    try {
      return await registry.getRegistryIdBySchema(subject, confluent);
    } catch (lookup) {
      if (statusOf(lookup) === 404 || statusOf(lookup) === undefined) {
        throw new SchemaLookupError(
          `may not register schemas here (403) and this schema is not registered under the subject: ${messageOf(lookup)}`,
          statusOf(lookup),
        );
      }
      throw lookup;
    }
  }
}

/**
 * The client registers with a compatibility level and refuses when the subject has another; a
 * subject quoteflow creates gets BACKWARD, an existing one keeps the level its owners chose.
 */
async function registerKeepingCompatibility(
  registry: SchemaRegistry,
  subject: string,
  schema: { type: SchemaType.AVRO; schema: string },
): Promise<{ id: number }> {
  try {
    return await registry.register(schema, { subject, compatibility: 'BACKWARD' as COMPATIBILITY });
  } catch (err) {
    // The client's ConfluentSchemaRegistryCompatibilityError (not exported): "(BACKWARD != FULL)".
    const level = /^Compatibility does not match the configuration \(\w+ != (\w+)\)/.exec(
      messageOf(err),
    )?.[1];
    if (level === undefined || !COMPATIBILITY_LEVELS.includes(level)) throw err;
    return registry.register(schema, { subject, compatibility: level as COMPATIBILITY, updateConfig: false });
  }
}

/** The client's COMPATIBILITY values. */
const COMPATIBILITY_LEVELS = [
  'NONE',
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
];

/** A lookup the registry refused (with its status), turned into a {@link SchemaRegistryError} by `open`. */
class SchemaLookupError extends QuoteflowError {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super('QF_SCHEMA_REGISTRY', message);
  }
}

function statusOf(err: unknown): number | undefined {
  return err !== null && typeof err === 'object' && 'status' in err && typeof err.status === 'number'
    ? err.status
    : undefined;
}

function messageOf(err: unknown): string {
  // The client prefixes its client id ("quoteflow - …").
  return (err instanceof Error ? err.message : String(err)).replace(/^quoteflow - /, '');
}

/** The client reports a connection that failed as a "status 400" with the socket's error code. */
const NETWORK_ERROR =
  /\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|socket hang up|certificate|self[- ]signed)/i;

/** The error `open` rejects with: the registry's own words, what it means, no request details. */
function registryError(url: string, subject: string, err: unknown): SchemaRegistryError {
  const said = messageOf(err);
  const status = NETWORK_ERROR.test(said) ? undefined : statusOf(err);
  let reason: string;
  if (status === 401)
    reason = `authentication refused (401): check QUOTEFLOW_SCHEMA_REGISTRY_USER and QUOTEFLOW_SCHEMA_REGISTRY_PASSWORD (${said})`;
  else if (status === 409)
    reason = `schema refused as incompatible with the subject's earlier versions (409): ${said}`;
  else if (status === 422) reason = `schema refused as invalid (422): ${said}`;
  else if (status !== undefined) reason = `the registry answered ${status}: ${said}`;
  else reason = `unreachable or no answer: ${said}`;
  return new SchemaRegistryError(url, subject, reason.replace(/Error, status 400: /, ''), status);
}

/** A registry URL: http(s), no credentials (they come separately); trailing slashes dropped. */
export function checkRegistryUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new InvalidOptionError('url', 'schema registry: the URL is not a URL (http://host:port[/path])');
  }
  if (u.username !== '' || u.password !== '') {
    // The URL is not echoed: it holds a secret.
    throw new InvalidOptionError(
      'url',
      'schema registry: credentials do not go in the URL; set QUOTEFLOW_SCHEMA_REGISTRY_USER and QUOTEFLOW_SCHEMA_REGISTRY_PASSWORD',
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new InvalidOptionError(
      'url',
      `schema registry: the URL must be http or https, got ${JSON.stringify(raw)}`,
    );
  }
  return u.toString().replace(/\/+$/, '');
}

function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
