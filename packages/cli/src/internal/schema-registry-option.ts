// Sinks is loaded where a registry is used, not here: the commands import this module (for the
// help text) when they are registered, and listing commands must not load the sinks (choices.ts).
import type { KafkaTopicKind, KafkaValueSerializer, SchemaRegistrySerializer } from '@quoteflow/sinks';
import { UsageError } from './usage-error.js';

/** Basic auth of the schema registry: from the environment only (never a flag or a file). */
export const SCHEMA_REGISTRY_USER_ENV = 'QUOTEFLOW_SCHEMA_REGISTRY_USER';
export const SCHEMA_REGISTRY_PASSWORD_ENV = 'QUOTEFLOW_SCHEMA_REGISTRY_PASSWORD';

/** `--schema-registry URL` (or a pipeline file's `kafka.schemaRegistry`), checked, with its credentials. */
export interface CliSchemaRegistry {
  readonly url: string;
  /** The topics whose values go through it (their subjects are registered at start). */
  readonly kinds: readonly KafkaTopicKind[];
  /** The flag or field, for errors. */
  readonly flag: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
}

/**
 * Checks a registry URL (http(s), no credentials in it: exit 2 naming `flag`, the URL not echoed
 * since it may hold a password) and takes the credentials from the environment (both or neither).
 */
export async function resolveSchemaRegistry(
  url: string | undefined,
  kinds: readonly KafkaTopicKind[],
  env: Readonly<Record<string, string | undefined>>,
  flag = '--schema-registry',
): Promise<CliSchemaRegistry | undefined> {
  if (url === undefined) return undefined;
  const { checkRegistryUrl } = await import('@quoteflow/sinks/internal');
  let checked: string;
  try {
    checked = checkRegistryUrl(url);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message.replace(/^schema registry: /, '')}`);
  }
  const username = env[SCHEMA_REGISTRY_USER_ENV] || undefined;
  const password = env[SCHEMA_REGISTRY_PASSWORD_ENV] || undefined;
  if ((username === undefined) !== (password === undefined)) {
    throw new UsageError(
      `${flag}: set both ${SCHEMA_REGISTRY_USER_ENV} and ${SCHEMA_REGISTRY_PASSWORD_ENV}, or neither`,
    );
  }
  return { url: checked, kinds, flag, username, password };
}

/** The serializers opened in this process, by registry, user, topic prefix and kinds. */
const opened = new Map<string, SchemaRegistrySerializer>();
const keyOf = (r: CliSchemaRegistry, topicPrefix: string): string =>
  JSON.stringify([r.url, r.username ?? '', topicPrefix, [...r.kinds].sort()]);

/**
 * Registers (or looks up) the schemas of `registry`'s topics: at the command's start, with the
 * Kafka check, before any request to the service. A failure is a `SchemaRegistryError` (exit 1)
 * naming the registry and the subject.
 */
export async function openSchemaRegistry(
  registry: CliSchemaRegistry,
  topicPrefix: string,
  timeoutMs: number,
): Promise<void> {
  const key = keyOf(registry, topicPrefix);
  if (opened.has(key)) return;
  const { SchemaRegistrySerializer } = await import('@quoteflow/sinks');
  const serializer = await SchemaRegistrySerializer.open({
    url: registry.url,
    topicPrefix,
    kinds: registry.kinds,
    timeoutMs,
    ...(registry.username === undefined ? {} : { username: registry.username, password: registry.password! }),
  });
  opened.set(key, serializer);
}

/** The serializer {@link openSchemaRegistry} opened for these settings. */
export function openedSchemaRegistry(registry: CliSchemaRegistry, topicPrefix: string): KafkaValueSerializer {
  const serializer = opened.get(keyOf(registry, topicPrefix));
  if (serializer === undefined)
    throw new Error(`${registry.flag}: the schema registry was not opened before the Kafka sink`);
  return serializer;
}

/** `--schema-registry`'s help, the same on every command that produces to Kafka. */
export const SCHEMA_REGISTRY_HELP =
  `with --kafka: record values in Avro (Confluent wire format, subjects <topic>-value), schemas registered at ` +
  `start (looked up where registering is refused); basic auth from ${SCHEMA_REGISTRY_USER_ENV} and ` +
  `${SCHEMA_REGISTRY_PASSWORD_ENV}. Without it values are JSON`;

/** A command's `--schema-registry` (needs a Kafka sink, `--kafka` or `bootstrap.servers`: exit 2 otherwise). */
export async function schemaRegistryFlag(
  flags: { readonly schemaRegistry?: string | undefined },
  kafka: object | undefined,
  kinds: readonly KafkaTopicKind[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<CliSchemaRegistry | undefined> {
  if (flags.schemaRegistry !== undefined && kafka === undefined)
    throw new UsageError('--schema-registry needs --kafka');
  return resolveSchemaRegistry(flags.schemaRegistry, kinds, env);
}
