/**
 * The Kafka connection of a CLI command or pipeline file, in one place: `--kafka BROKERS`,
 * `--kafka-config FILE` (a properties file, `${NAME}` from the environment), `-X KEY=VALUE` /
 * `--kafka-property` (repeatable, over the file), and how topics are created
 * (`--kafka-create-topics`, `--kafka-partitions`, `--kafka-replication-factor`,
 * `--kafka-topic-config`). The property names are librdkafka's and the Java client's (the sinks'
 * `kafkaSettingsFromProperties` knows them). Secrets (sasl.password, ssl.key.password) are handed
 * to the redactor as soon as they are known, and no message shows one.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { KafkaDelivery, KafkaSaslOptions, KafkaTlsOptions, KafkaCompression } from '@quoteflow/sinks';
import { intAtLeast } from './parse-args.js';
import type { Redactor } from './redactor.js';
import type { CliSchemaRegistry } from './schema-registry-option.js';
import { UsageError } from './usage-error.js';

/** The flags {@link addKafkaConnectionOptions} adds. */
export interface KafkaConnectionFlags {
  kafka?: string;
  kafkaConfig?: string;
  kafkaProperty?: string[];
  kafkaCreateTopics?: boolean;
  kafkaPartitions?: number;
  kafkaReplicationFactor?: number;
  kafkaTopicConfig?: string[];
}

/** How a command's sink creates its topics. */
export interface CliKafkaTopicSettings {
  /** Create a missing topic (default), or fail naming it. */
  readonly createTopics: boolean;
  readonly partitions?: number | undefined;
  readonly replicationFactor?: number | undefined;
  readonly topicConfigs?: Readonly<Record<string, string>> | undefined;
}

/** The settings a CLI command gives its Kafka sinks. */
export interface CliKafkaOptions extends CliKafkaTopicSettings {
  readonly brokers: string | readonly string[];
  readonly topicPrefix: string;
  readonly clientId?: string | undefined;
  readonly compression?: KafkaCompression | undefined;
  readonly tls?: KafkaTlsOptions | undefined;
  readonly sasl?: KafkaSaslOptions | undefined;
  /** K-lines: `--kafka-delivery`; unset, exactly once where the brokers run transactions. */
  readonly delivery?: KafkaDelivery | undefined;
  /** K-lines: `--kafka-transactional-id`, the stem of the sink's transactional id. */
  readonly transactionalId?: string | undefined;
  /** `--schema-registry`: Avro values (opened by `checkKafka`); JSON without. */
  readonly schemaRegistry?: CliSchemaRegistry | undefined;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function keyValue(flag: string): (value: string, previous?: string[]) => string[] {
  return (value, previous = []) => {
    if (!/^[A-Za-z0-9._-]+=/.test(value))
      throw new InvalidArgumentError(`${flag} takes KEY=VALUE, got ${JSON.stringify(value.split('=')[0])}…`);
    return collect(value, previous);
  };
}

function bool(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError(`expected true or false, got ${JSON.stringify(value)}`);
}

/** Adds the connection and topic-creation flags beside a command's `--kafka`. */
export function addKafkaConnectionOptions(cmd: Command): Command {
  return cmd
    .option(
      '--kafka-config <file>',
      'Kafka client properties file (librdkafka/Java names: bootstrap.servers, security.protocol, sasl.mechanism, sasl.username, sasl.password, ssl.ca.location, …; ${NAME} takes a value from the environment)',
    )
    .option(
      '-X, --kafka-property <key=value>',
      'one Kafka client property, over --kafka-config (repeatable)',
      keyValue('-X/--kafka-property'),
    )
    .option(
      '--kafka-create-topics <bool>',
      'create a missing topic (true, the default) or fail naming it (false: topics are provisioned)',
      bool,
    )
    .option(
      '--kafka-partitions <n>',
      "partitions of a topic created here (default: the broker's)",
      intAtLeast(1),
    )
    .option(
      '--kafka-replication-factor <n>',
      "replication factor of a topic created here (default: the broker's)",
      intAtLeast(1),
    )
    .option(
      '--kafka-topic-config <name=value>',
      'a config of a topic created here (cleanup.policy=compact, min.insync.replicas=2, …; repeatable)',
      keyValue('--kafka-topic-config'),
    );
}

/** Java properties text (`key=value` / `key: value`, `#`/`!` comments) → entries, `${NAME}` filled from `env`. */
export function parseKafkaPropertiesFile(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  label = '--kafka-config',
): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) return;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m === null) throw new UsageError(`${label} ${file}:${i + 1}: expected key=value`);
    const key = m[1] as string;
    out[key] = (m[2] as string).replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g,
      (_, name: string, fallback?: string) => {
        const value = env[name] ?? fallback;
        if (value === undefined)
          throw new UsageError(`${label} ${file}:${i + 1}: ${key}: environment variable ${name} is not set`);
        return value;
      },
    );
  });
  return out;
}

/** A properties file (`--kafka-config`, a block's `configFile`), read and parsed; unreadable = usage error. */
async function readPropertiesFile(
  file: string,
  label: string,
  io: { readonly env: Readonly<Record<string, string | undefined>>; readonly cwd: string },
): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(resolve(io.cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(
      `${label} ${JSON.stringify(file)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parseKafkaPropertiesFile(text, file, io.env, label);
}

/** `-X`/`--kafka-topic-config` entries → a record (the last of a key wins). */
function entries(list: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) {
    const at = kv.indexOf('=');
    out[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return out;
}

/**
 * The Kafka options of a command's flags, or `undefined` when it produces to no Kafka (neither
 * `--kafka` nor `bootstrap.servers`). Bad properties are a {@link UsageError} naming the property
 * (exit 2), before any connection; secrets go to `redactor` first.
 */
export async function resolveKafkaConnection(
  flags: KafkaConnectionFlags & { readonly topicPrefix: string },
  io: { readonly env: Readonly<Record<string, string | undefined>>; readonly cwd: string },
  redactor: Redactor,
): Promise<CliKafkaOptions | undefined> {
  let properties: Record<string, string> = {};
  if (flags.kafkaConfig !== undefined)
    properties = await readPropertiesFile(flags.kafkaConfig, '--kafka-config', io);
  properties = { ...properties, ...entries(flags.kafkaProperty) };
  if (flags.kafka !== undefined) properties['bootstrap.servers'] = flags.kafka;
  const topicFlags = [
    'kafkaCreateTopics',
    'kafkaPartitions',
    'kafkaReplicationFactor',
    'kafkaTopicConfig',
  ] as const;
  if (properties['bootstrap.servers'] === undefined) {
    const given =
      flags.kafkaConfig !== undefined ||
      (flags.kafkaProperty?.length ?? 0) > 0 ||
      topicFlags.some((f) => flags[f] !== undefined);
    if (given)
      throw new UsageError('the Kafka settings name no brokers: give --kafka BROKERS or bootstrap.servers');
    return undefined;
  }
  return cliKafkaOptionsOf(
    properties,
    topicSettingsOfFlags(flags),
    flags.topicPrefix,
    io.cwd,
    redactor,
    (p) => `Kafka property ${p}`,
  );
}

function topicSettingsOfFlags(flags: KafkaConnectionFlags): CliKafkaTopicSettings {
  const configs = entries(flags.kafkaTopicConfig);
  return {
    createTopics: flags.kafkaCreateTopics ?? true,
    partitions: flags.kafkaPartitions,
    replicationFactor: flags.kafkaReplicationFactor,
    ...(Object.keys(configs).length === 0 ? {} : { topicConfigs: configs }),
  };
}

/**
 * Kafka options from client properties and topic settings (the CLI's flags or a pipeline file's
 * `kafka:` block): properties checked by the sinks' rules, files relative to `cwd`, secrets to the
 * redactor. `name(property)` says where a bad property was written, for the message.
 */
export async function cliKafkaOptionsOf(
  properties: Readonly<Record<string, string>>,
  topics: CliKafkaTopicSettings,
  topicPrefix: string,
  cwd: string,
  redactor: Redactor,
  name: (property: string) => string,
): Promise<CliKafkaOptions> {
  const { kafkaSettingsFromProperties, isSecretKafkaProperty } = await import('@quoteflow/sinks/internal');
  const { InvalidOptionError } = await import('@quoteflow/core');
  for (const [key, value] of Object.entries(properties)) if (isSecretKafkaProperty(key)) redactor.add(value);
  let settings;
  try {
    const { readFileSync } = await import('node:fs');
    settings = kafkaSettingsFromProperties(properties, (path) => readFileSync(resolve(cwd, path)));
  } catch (err) {
    if (err instanceof InvalidOptionError)
      throw new UsageError(`${name(err.option)}: ${err.message.replace(/^Kafka property \S+: /, '')}`);
    throw err;
  }
  for (const [key, value] of Object.entries(topics.topicConfigs ?? {}))
    if (value === '') throw new UsageError(`topic config ${key} has no value`);
  return {
    brokers: settings.brokers ?? '',
    topicPrefix,
    ...topics,
    ...(settings.clientId === undefined ? {} : { clientId: settings.clientId }),
    ...(settings.compression === undefined ? {} : { compression: settings.compression }),
    ...(settings.tls === undefined ? {} : { tls: settings.tls }),
    ...(settings.sasl === undefined ? {} : { sasl: settings.sasl }),
  };
}

/** Secrets on a command line (`-X sasl.password=…`), found before parsing so a usage error never echoes one. */
export function kafkaSecretsInArgs(argv: readonly string[]): string[] {
  const found: string[] = [];
  argv.forEach((arg, i) => {
    const value =
      arg === '-X' || arg === '--kafka-property'
        ? argv[i + 1]
        : /^(?:-X|--kafka-property=)(.*)$/.exec(arg)?.[1];
    const m = value === undefined ? null : /^(sasl\.password|ssl\.key\.password)=(.+)$/.exec(value);
    if (m?.[2] !== undefined) found.push(m[2]);
  });
  return found;
}

/** A pipeline file's `kafka:` sink block (pipeline-file.ts's schema), as far as the connection goes. */
export interface PipelineKafkaBlock {
  readonly brokers?: string | readonly string[] | undefined;
  readonly topicPrefix: string;
  readonly clientId?: string | undefined;
  readonly compression?: string | undefined;
  readonly configFile?: string | undefined;
  readonly properties?: Readonly<Record<string, string | number | boolean>> | undefined;
  readonly tls?:
    | boolean
    | {
        readonly caFile?: string | undefined;
        readonly certFile?: string | undefined;
        readonly keyFile?: string | undefined;
        readonly keyPassword?: string | undefined;
        readonly checkHostname?: boolean | undefined;
      }
    | undefined;
  readonly sasl?:
    { readonly mechanism: string; readonly username: string; readonly password: string } | undefined;
  readonly createTopics?: boolean | undefined;
  readonly topics?:
    | {
        readonly partitions?: number | undefined;
        readonly replicationFactor?: number | undefined;
        readonly configs?: Readonly<Record<string, string | number | boolean>> | undefined;
      }
    | undefined;
}

/** Where each client property comes from in a `kafka:` block, for messages. */
const BLOCK_FIELDS: Readonly<Record<string, string>> = {
  'bootstrap.servers': 'brokers',
  'client.id': 'clientId',
  'compression.type': 'compression',
  'ssl.ca.location': 'tls.caFile',
  'ssl.certificate.location': 'tls.certFile',
  'ssl.key.location': 'tls.keyFile',
  'ssl.key.password': 'tls.keyPassword',
  'ssl.endpoint.identification.algorithm': 'tls.checkHostname',
  'sasl.mechanism': 'sasl.mechanism',
  'sasl.username': 'sasl.username',
  'sasl.password': 'sasl.password',
};

/**
 * The Kafka options of a pipeline file's `kafka:` block at `path` (`pipelines[0].sinks.kafka`):
 * `configFile` (a properties file), then `properties` (client property names), then the block's own
 * fields (`brokers`, `tls:`, `sasl:`, …), each over the one before. Same checks and messages as the
 * CLI's flags, naming the block's field.
 */
export async function pipelineKafkaOptions(
  block: PipelineKafkaBlock,
  path: string,
  io: { readonly env: Readonly<Record<string, string | undefined>>; readonly cwd: string },
  redactor: Redactor,
): Promise<CliKafkaOptions> {
  let properties: Record<string, string> = {};
  if (block.configFile !== undefined)
    properties = await readPropertiesFile(block.configFile, `${path}.configFile`, io);
  for (const [k, v] of Object.entries(block.properties ?? {})) properties[k] = String(v);
  const own = blockProperties(block);
  properties = { ...properties, ...own };
  if (properties['bootstrap.servers'] === undefined)
    throw new UsageError(`${path}.brokers: no brokers (brokers, properties.bootstrap.servers or configFile)`);
  const t = block.topics;
  const configs = Object.fromEntries(Object.entries(t?.configs ?? {}).map(([k, v]) => [k, String(v)]));
  return cliKafkaOptionsOf(
    properties,
    {
      createTopics: block.createTopics ?? true,
      partitions: t?.partitions,
      replicationFactor: t?.replicationFactor,
      ...(Object.keys(configs).length === 0 ? {} : { topicConfigs: configs }),
    },
    block.topicPrefix,
    io.cwd,
    redactor,
    (p) =>
      p in own
        ? `${path}.${BLOCK_FIELDS[p] ?? p}`
        : block.properties?.[p] !== undefined
          ? `${path}.properties.${p}`
          : `${path}.configFile: ${p}`,
  );
}

/** The client properties a `kafka:` block's own fields stand for. */
function blockProperties(block: PipelineKafkaBlock): Record<string, string> {
  const out: Record<string, string> = {};
  if (block.brokers !== undefined) out['bootstrap.servers'] = [block.brokers].flat().join(',');
  if (block.clientId !== undefined) out['client.id'] = block.clientId;
  if (block.compression !== undefined) out['compression.type'] = block.compression;
  const tls = block.tls === true ? {} : block.tls === false ? undefined : block.tls;
  if (tls !== undefined || block.sasl !== undefined)
    out['security.protocol'] =
      tls === undefined ? 'SASL_PLAINTEXT' : block.sasl === undefined ? 'SSL' : 'SASL_SSL';
  if (tls?.caFile !== undefined) out['ssl.ca.location'] = tls.caFile;
  if (tls?.certFile !== undefined) out['ssl.certificate.location'] = tls.certFile;
  if (tls?.keyFile !== undefined) out['ssl.key.location'] = tls.keyFile;
  if (tls?.keyPassword !== undefined) out['ssl.key.password'] = tls.keyPassword;
  if (tls?.checkHostname === false) out['ssl.endpoint.identification.algorithm'] = 'none';
  if (block.sasl !== undefined) {
    out['sasl.mechanism'] = block.sasl.mechanism;
    out['sasl.username'] = block.sasl.username;
    out['sasl.password'] = block.sasl.password;
  }
  return out;
}
