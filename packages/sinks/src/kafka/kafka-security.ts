/**
 * How a Kafka client reaches a secured cluster: TLS (server certificate checked against a CA,
 * optionally a client certificate) and SASL (PLAIN or SCRAM). Both built-in drivers, the sinks'
 * read-back of committed records and {@link checkKafkaCluster} take the same settings; a password
 * or key is never part of an error message, a log line or `JSON.stringify` of these options' checks.
 */
import { InvalidOptionError } from '@quoteflow/core';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';

/** SASL mechanisms the drivers authenticate with. */
export const KAFKA_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
/** One of {@link KAFKA_SASL_MECHANISMS}. */
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

/** SASL login (`security.protocol` SASL_SSL, or SASL_PLAINTEXT without `tls`). */
export interface KafkaSaslOptions {
  /** PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. */
  readonly mechanism: KafkaSaslMechanism;
  /** The principal's name (named in failures). */
  readonly username: string;
  /** Never shown in any message. */
  readonly password: string;
}

/** TLS to the brokers (`security.protocol` SSL, or SASL_SSL with `sasl`). */
export interface KafkaTlsOptions {
  /** PEM certificates of the CAs to trust (`ssl.ca.location`'s content); Node's own CAs otherwise. */
  readonly ca?: string | Buffer;
  /** PEM client certificate (mTLS; `ssl.certificate.location`'s content). */
  readonly cert?: string | Buffer;
  /** PEM private key of the client certificate (`ssl.key.location`'s content). */
  readonly key?: string | Buffer;
  /** Password of an encrypted `key` (`ssl.key.password`). */
  readonly keyPassword?: string;
  /**
   * Whether the broker's certificate must name the host connected to
   * (`ssl.endpoint.identification.algorithm=https`, the default) or not (`none`).
   * @defaultValue true
   */
  readonly checkHostname?: boolean;
}

/** The connection security of a Kafka client, checked. */
export interface KafkaSecurity {
  /** TLS to the brokers; plaintext when absent. */
  readonly tls?: KafkaTlsOptions | undefined;
  /** SASL login; none when absent. */
  readonly sasl?: KafkaSaslOptions | undefined;
}

/**
 * Checks `tls` / `sasl` sink options and resolves `tls: true` to `{}`: the mechanism is one the
 * drivers support (OAUTHBEARER is refused by name: quoteflow takes no token provider), user name
 * and password are non-empty strings. Messages never quote the password or a key.
 */
export function resolveKafkaSecurity(tls: unknown, sasl: unknown): KafkaSecurity {
  const out: { tls?: KafkaTlsOptions; sasl?: KafkaSaslOptions } = {};
  if (tls === true) out.tls = {};
  else if (typeof tls === 'object' && tls !== null) out.tls = checkTls(tls as Record<string, unknown>);
  else if (tls !== undefined && tls !== false)
    throw new InvalidOptionError(
      'tls',
      'kafka: "tls" must be true, false or an object {ca, cert, key, keyPassword, checkHostname}',
    );
  if (sasl !== undefined) out.sasl = checkSasl(sasl);
  return out;
}

function checkTls(tls: Record<string, unknown>): KafkaTlsOptions {
  for (const name of ['ca', 'cert', 'key'] as const) {
    const v = tls[name];
    if (v !== undefined && typeof v !== 'string' && !Buffer.isBuffer(v))
      throw new InvalidOptionError(
        `tls.${name}`,
        `kafka: "tls.${name}" must be PEM text (a string or a Buffer)`,
      );
  }
  if ((tls['cert'] === undefined) !== (tls['key'] === undefined))
    throw new InvalidOptionError(
      tls['cert'] === undefined ? 'tls.cert' : 'tls.key',
      'kafka: a client certificate needs both "tls.cert" and "tls.key"',
    );
  if (tls['keyPassword'] !== undefined && typeof tls['keyPassword'] !== 'string')
    throw new InvalidOptionError('tls.keyPassword', 'kafka: "tls.keyPassword" must be a string');
  if (tls['checkHostname'] !== undefined && typeof tls['checkHostname'] !== 'boolean')
    throw new InvalidOptionError('tls.checkHostname', 'kafka: "tls.checkHostname" must be true or false');
  return tls as KafkaTlsOptions;
}

function checkSasl(sasl: unknown): KafkaSaslOptions {
  if (typeof sasl !== 'object' || sasl === null)
    throw new InvalidOptionError('sasl', 'kafka: "sasl" must be an object {mechanism, username, password}');
  const { mechanism, username, password } = sasl as Record<string, unknown>;
  if (typeof mechanism === 'string' && mechanism.toUpperCase() === 'OAUTHBEARER')
    throw new InvalidOptionError(
      'sasl.mechanism',
      'kafka: SASL mechanism OAUTHBEARER is not supported (quoteflow takes no token provider); use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512',
    );
  if (!(KAFKA_SASL_MECHANISMS as readonly unknown[]).includes(mechanism))
    throw new InvalidOptionError(
      'sasl.mechanism',
      `kafka: "sasl.mechanism" must be one of ${KAFKA_SASL_MECHANISMS.join(', ')}, got ${JSON.stringify(mechanism)}`,
    );
  if (typeof username !== 'string' || username === '')
    throw new InvalidOptionError('sasl.username', 'kafka: "sasl.username" must be a non-empty string');
  if (typeof password !== 'string' || password === '')
    throw new InvalidOptionError('sasl.password', 'kafka: "sasl.password" must be a non-empty string');
  return { mechanism: mechanism as KafkaSaslMechanism, username, password };
}

/** Node's TLS options of `tls` (for kafkajs's `ssl` and @platformatic/kafka's `tls`). */
export function nodeTlsOptions(tls: KafkaTlsOptions): TlsConnectionOptions {
  return {
    rejectUnauthorized: true,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.keyPassword === undefined ? {} : { passphrase: tls.keyPassword }),
    ...(tls.checkHostname === false ? { checkServerIdentity: () => undefined } : {}),
  };
}

/**
 * kafkajs's `ssl` and `sasl` client settings of `security` (kafkajs names mechanisms in lower case).
 * Typed here rather than with kafkajs's types: kafkajs is an optional peer dependency, and a public
 * declaration must compile without it.
 */
export function kafkajsSecurity(security: KafkaSecurity): {
  ssl?: TlsConnectionOptions;
  // One settings object per mechanism, as kafkajs's union of them takes it.
  sasl?: {
    [M in KafkaSaslMechanism]: { mechanism: Lowercase<M>; username: string; password: string };
  }[KafkaSaslMechanism];
} {
  const { tls, sasl } = security;
  return {
    ...(tls === undefined ? {} : { ssl: nodeTlsOptions(tls) }),
    ...(sasl === undefined
      ? {}
      : {
          sasl: {
            mechanism: sasl.mechanism.toLowerCase(),
            username: sasl.username,
            password: sasl.password,
          } as { mechanism: 'plain'; username: string; password: string },
        }),
  };
}

/** @platformatic/kafka's `tls` and `sasl` client settings of `security`. */
export function platformaticSecurity(security: KafkaSecurity): {
  tls?: TlsConnectionOptions;
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password: string };
} {
  const { tls, sasl } = security;
  return {
    ...(tls === undefined ? {} : { tls: nodeTlsOptions(tls) }),
    ...(sasl === undefined
      ? {}
      : { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } }),
  };
}
