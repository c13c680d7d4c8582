/**
 * Kafka connection settings by the client property names kcat, librdkafka and the Java client use
 * (`bootstrap.servers`, `security.protocol`, `sasl.mechanism`, `ssl.ca.location`, …), turned into
 * the sinks' options. Unknown names and bad values are refused naming the property; files named
 * by `ssl.*.location` are read and checked (a certificate parses, a key opens with
 * `ssl.key.password`) so a mistake shows before any connection. No message quotes a password.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InvalidOptionError } from '@quoteflow/core';
import { KAFKA_COMPRESSIONS, type KafkaCompression } from './kafka-producer-driver.js';
import {
  KAFKA_SASL_MECHANISMS,
  type KafkaSaslMechanism,
  type KafkaSaslOptions,
  type KafkaTlsOptions,
} from './kafka-security.js';

/** The property names understood (librdkafka's `sasl.mechanisms` is taken for `sasl.mechanism`). */
export const KAFKA_CONNECTION_PROPERTIES = [
  'bootstrap.servers',
  'security.protocol',
  'sasl.mechanism',
  'sasl.mechanisms',
  'sasl.username',
  'sasl.password',
  'ssl.ca.location',
  'ssl.certificate.location',
  'ssl.key.location',
  'ssl.key.password',
  'ssl.endpoint.identification.algorithm',
  'client.id',
  'compression.type',
] as const;

/** `security.protocol` values: TLS or not, SASL or not. */
export const KAFKA_SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
/** One of {@link KAFKA_SECURITY_PROTOCOLS}. */
export type KafkaSecurityProtocol = (typeof KAFKA_SECURITY_PROTOCOLS)[number];

/** Sink options from properties (only those the properties set). */
export interface KafkaConnectionSettings {
  /** `bootstrap.servers`. */
  readonly brokers?: string;
  /** `client.id`. */
  readonly clientId?: string;
  /** `compression.type`. */
  readonly compression?: KafkaCompression;
  /** `security.protocol` SSL or SASL_SSL, with the `ssl.*` files read. */
  readonly tls?: KafkaTlsOptions;
  /** `security.protocol` SASL_*, with `sasl.*`. */
  readonly sasl?: KafkaSaslOptions;
}

const SECRET_PROPERTIES = new Set(['sasl.password', 'ssl.key.password']);

/** Whether a property holds a secret (its value is never shown). */
export function isSecretKafkaProperty(name: string): boolean {
  return SECRET_PROPERTIES.has(name);
}

/**
 * The sink options `properties` describe. `readFile` reads the `ssl.*.location` files (tests pass
 * their own). Throws {@link InvalidOptionError} whose `option` is the property's name.
 */
export function kafkaSettingsFromProperties(
  properties: Readonly<Record<string, string>>,
  readFile: (path: string) => Buffer = readFileSync,
): KafkaConnectionSettings {
  for (const name of Object.keys(properties))
    if (!(KAFKA_CONNECTION_PROPERTIES as readonly string[]).includes(name))
      throw bad(name, `unknown Kafka property (known: ${KAFKA_CONNECTION_PROPERTIES.join(', ')})`);
  const p = (name: string): string | undefined => properties[name];
  const protocol = securityProtocol(p('security.protocol'));
  const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const saslOn = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
  for (const name of ['sasl.mechanism', 'sasl.mechanisms', 'sasl.username', 'sasl.password'])
    if (!saslOn && p(name) !== undefined)
      throw bad(name, `needs security.protocol SASL_SSL or SASL_PLAINTEXT (it is ${protocol})`);
  for (const name of KAFKA_CONNECTION_PROPERTIES.filter((n) => n.startsWith('ssl.')))
    if (!tls && p(name) !== undefined)
      throw bad(name, `needs security.protocol SSL or SASL_SSL (it is ${protocol})`);
  const out: {
    brokers?: string;
    clientId?: string;
    compression?: KafkaCompression;
    tls?: KafkaTlsOptions;
    sasl?: KafkaSaslOptions;
  } = {};
  const brokers = p('bootstrap.servers');
  if (brokers !== undefined) {
    if (!brokers.split(',').every((b) => /^[^\s:,]+:\d+$/.test(b.trim())))
      throw bad('bootstrap.servers', `must be host:port[,host:port…], got ${JSON.stringify(brokers)}`);
    out.brokers = brokers;
  }
  const clientId = p('client.id');
  if (clientId !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(clientId))
      throw bad('client.id', `must be letters, digits, '.', '_' or '-', got ${JSON.stringify(clientId)}`);
    out.clientId = clientId;
  }
  const compression = p('compression.type');
  if (compression !== undefined) {
    if (!(KAFKA_COMPRESSIONS as readonly string[]).includes(compression))
      throw bad(
        'compression.type',
        `must be one of ${KAFKA_COMPRESSIONS.join(', ')}, got ${JSON.stringify(compression)}`,
      );
    out.compression = compression as KafkaCompression;
  }
  if (saslOn) out.sasl = saslSettings(p);
  if (tls) out.tls = tlsSettings(p, readFile);
  return out;
}

function bad(name: string, why: string): InvalidOptionError {
  return new InvalidOptionError(name, `Kafka property ${name}: ${why}`);
}

function securityProtocol(value: string | undefined): KafkaSecurityProtocol {
  if (value === undefined) return 'PLAINTEXT';
  const upper = value.toUpperCase();
  if (!(KAFKA_SECURITY_PROTOCOLS as readonly string[]).includes(upper))
    throw bad(
      'security.protocol',
      `must be one of ${KAFKA_SECURITY_PROTOCOLS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  return upper as KafkaSecurityProtocol;
}

function saslSettings(p: (name: string) => string | undefined): KafkaSaslOptions {
  const key = p('sasl.mechanism') !== undefined ? 'sasl.mechanism' : 'sasl.mechanisms';
  const mechanism = p(key)?.toUpperCase();
  if (mechanism === undefined) throw bad('sasl.mechanism', 'is needed with security.protocol SASL_*');
  if (mechanism === 'OAUTHBEARER')
    throw bad(
      key,
      'OAUTHBEARER is not supported (quoteflow takes no token provider); use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512',
    );
  if (!(KAFKA_SASL_MECHANISMS as readonly string[]).includes(mechanism))
    throw bad(key, `must be one of ${KAFKA_SASL_MECHANISMS.join(', ')}, got ${JSON.stringify(p(key))}`);
  const username = p('sasl.username');
  const password = p('sasl.password');
  if (username === undefined || username === '')
    throw bad('sasl.username', `is needed with sasl.mechanism ${mechanism}`);
  if (password === undefined || password === '')
    throw bad(
      'sasl.password',
      `is needed with sasl.mechanism ${mechanism} (\${NAME} in a --kafka-config file takes it from the environment)`,
    );
  return { mechanism: mechanism as KafkaSaslMechanism, username, password };
}

function tlsSettings(
  p: (name: string) => string | undefined,
  readFile: (path: string) => Buffer,
): KafkaTlsOptions {
  const read = (name: string): Buffer | undefined => {
    const path = p(name);
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (err) {
      throw bad(
        name,
        `cannot read ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
  };
  const ca = read('ssl.ca.location');
  if (ca !== undefined) checkCertificate('ssl.ca.location', ca);
  const cert = read('ssl.certificate.location');
  const key = read('ssl.key.location');
  const keyPassword = p('ssl.key.password');
  if ((cert === undefined) !== (key === undefined))
    throw bad(
      cert === undefined ? 'ssl.key.location' : 'ssl.certificate.location',
      'a client certificate needs both ssl.certificate.location and ssl.key.location',
    );
  if (keyPassword !== undefined && key === undefined) throw bad('ssl.key.password', 'needs ssl.key.location');
  if (key !== undefined) {
    try {
      createPrivateKey({
        key,
        format: 'pem',
        ...(keyPassword === undefined ? {} : { passphrase: keyPassword }),
      });
    } catch {
      throw keyPassword === undefined
        ? bad(
            'ssl.key.location',
            `${JSON.stringify(p('ssl.key.location'))} is not a PEM private key, or it is encrypted and ssl.key.password is missing`,
          )
        : bad(
            'ssl.key.password',
            `does not open the key in ${JSON.stringify(p('ssl.key.location'))} (or that is not a PEM private key)`,
          );
    }
  }
  if (cert !== undefined) checkCertificate('ssl.certificate.location', cert);
  const algorithm = p('ssl.endpoint.identification.algorithm');
  if (algorithm !== undefined && algorithm !== 'https' && algorithm !== 'none')
    throw bad(
      'ssl.endpoint.identification.algorithm',
      `must be https or none, got ${JSON.stringify(algorithm)}`,
    );
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(keyPassword === undefined ? {} : { keyPassword }),
    ...(algorithm === 'none' ? { checkHostname: false } : {}),
  };
}

function checkCertificate(name: string, pem: Buffer): void {
  try {
    new X509Certificate(pem);
  } catch {
    throw bad(name, 'is not a PEM certificate');
  }
}
